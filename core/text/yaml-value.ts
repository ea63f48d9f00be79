import type { Document } from 'yaml';

/**
 * A parsed YAML document's value as plain data, or the sentence saying why it has none:
 * the `yaml` library refuses (throws) to expand aliases past a bound ("billion laughs":
 * nine lines of anchors that would be a billion nodes), and a pipeline file a pull request
 * holds is read by the App, where a throw would fail the delivery again and again instead
 * of telling the author what is wrong.
 */
export function yamlValue(document: Document): { value: unknown } | { problem: string } {
  try {
    return { value: document.toJS() ?? {} };
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    return {
      problem: `YAML aliases: ${error.message}; the file's aliases expand to too many values (expand them, or use fewer)`,
    };
  }
}
