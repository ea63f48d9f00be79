import {
  isMap,
  isScalar,
  parseDocument,
  visit,
  YAMLParseError,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';

/**
 * `parseDocument` of the `yaml` library, each map's keys checked to be unique in one pass:
 * its own `uniqueKeys` compares every key with each before it, so a map of 80,000 keys — a
 * 1 MB `fluksio.yml` of a pull request, which the App parses before anything is approved —
 * took minutes. A key met again is an error where the library reports one, in its words
 * (`DUPLICATE_KEY`, "Map keys must be unique"), after the syntax errors: scalar keys equal
 * by value, as the library compares them; collections as keys are never equal.
 */
export function parseYamlDocument(
  text: string,
  options: Omit<ParseOptions & DocumentOptions & SchemaOptions, 'uniqueKeys'> = {},
): ReturnType<typeof parseDocument> {
  const document = parseDocument(text, { ...options, uniqueKeys: false });
  const repeated: number[] = [];
  visit(document, {
    Map(_key, map) {
      if (!isMap(map)) return;
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        if (!isScalar(key)) continue;
        if (seen.has(key.value)) repeated.push(key.range?.[0] ?? 0);
        seen.add(key.value);
      }
    },
  });
  // In the file's order, as the library reports them (a map is visited before the maps in it).
  for (const start of repeated.sort((a, b) => a - b)) {
    document.errors.push(new YAMLParseError([start, start + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
  }
  return document;
}
