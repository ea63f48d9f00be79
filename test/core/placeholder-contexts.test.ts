import { expect, test } from 'vitest';
import { placeholderContexts } from '../../core/pipeline/placeholder-contexts.js';

const contextOf = (cmd: string) => placeholderContexts(cmd).map((placeholder) => placeholder.context);

test.each([
  ['echo ${x}', 'plain'],
  ['python3 train.py --lr=${x} > out.txt', 'plain'],
  ["echo 'a ${x} b'", 'single quotes'],
  ['echo "note=${x}"', 'double quotes'],
  ['echo "it\'s" ${x}', 'plain'],
  ['echo \\\\${x}', 'plain'],
  ['echo $(date) ${x}', 'plain'],
  ['echo "$(date)" "${x}"', 'double quotes'],
  ['echo $((1 + (2))) ${x}', 'plain'],
  ['(cd sub && make) && echo ${x}', 'plain'],
  ['echo a#b ${x}', 'plain'],
  ['echo $# ${x}', 'plain'],
  ['echo hi # note\necho ${x}', 'plain'],
])('%j: the placeholder is %s', (cmd, context) => {
  expect(contextOf(cmd)).toEqual([context]);
});

test.each([
  ['echo $(echo ${x})', 'a command substitution $(…)'],
  ['echo "$(echo "${x}")"', 'a command substitution $(…)'],
  ['echo `echo ${x}`', 'backquotes `…`'],
  ["echo $'${x}'", "$'…' quotes"],
  ['echo $((${x} + 1))', 'an arithmetic expansion $((…))'],
  ['echo \\${x}', 'right after a backslash'],
  ['echo "\\${x}"', 'right after a backslash'],
  ['echo $${x}', 'right after a $'],
  ['echo hi # ${x}', 'a comment'],
  ['cat <<EOF\n${x}\nEOF', 'a here-document'],
  ['echo "$(case a in a) echo ;; esac)" ${x}', 'a part of the command after a case inside $(…)'],
  ['case a in a) echo ;; esac; echo ${x}', 'a part of the command after an unbalanced ")"'],
])('%j: the placeholder is unsafe, inside %s', (cmd, where) => {
  expect(contextOf(cmd)).toEqual([{ unsafe: where }]);
});

test('every placeholder is found, with its name, in order', () => {
  expect(placeholderContexts('a ${x} "${y}" \'${z}\'').map(({ name, context }) => [name, context])).toEqual([
    ['x', 'plain'],
    ['y', 'double quotes'],
    ['z', 'single quotes'],
  ]);
});
