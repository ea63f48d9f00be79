import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = realpathSync(join(import.meta.dirname, '../..'));

/**
 * Every relative target of a markdown link or image in `text`: `[text](target)`,
 * `![alt](target "title")` and `[name]: target` definitions, without their `#anchor`;
 * web addresses, mail links and anchors within the page are left out.
 */
function relativeTargets(text: string): string[] {
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]);
  const defined = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1]);
  return [...inline, ...defined]
    .filter((target): target is string => target !== undefined)
    .filter((target) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(target))
    .map((target) => decodeURI(target.split('#')[0] ?? ''));
}

test('every relative link in README.md names a file inside the repository', () => {
  const readme = join(ROOT, 'README.md');
  const targets = relativeTargets(readFileSync(readme, 'utf8'));
  expect(targets.length).toBeGreaterThan(0);
  const broken = targets.filter((target) => {
    const path = join(dirname(readme), target);
    if (!existsSync(path)) return true;
    const inside = relative(ROOT, realpathSync(path));
    return inside === '..' || inside.startsWith(`..${sep}`);
  });
  expect(broken).toEqual([]);
});

test('the links looked at: relative targets of links, images and definitions, without anchors', () => {
  const text =
    '[a](../outside.md) ![b](docs/none.png "t") [c](#code-map) [d](https://example.com)\n[e]: ./README.md#top\n';
  expect(relativeTargets(text)).toEqual(['../outside.md', 'docs/none.png', './README.md']);
});
