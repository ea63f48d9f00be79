import { expect, test } from 'vitest';
import { parseWorkflowCommand } from '../../runner/output/workflow-command.js';

test.each([
  { line: '::metric name=loss::0.25', name: 'metric', properties: { name: 'loss' }, value: '0.25' },
  {
    line: '::metric name=loss,step=3::0.25',
    name: 'metric',
    properties: { name: 'loss', step: '3' },
    value: '0.25',
  },
  { line: '::group::Training', name: 'group', properties: {}, value: 'Training' },
  { line: '::endgroup::', name: 'endgroup', properties: {}, value: '' },
  { line: '::add-mask::', name: 'add-mask', properties: {}, value: '' },
  { line: '::notice::a::b', name: 'notice', properties: {}, value: 'a::b' },
  {
    line: '::error file=src/a.py,line=3,title=Bad%3A thing%2C really::first%0Asecond%0D %25',
    name: 'error',
    properties: { file: 'src/a.py', line: '3', title: 'Bad: thing, really' },
    value: 'first\nsecond\r %',
  },
  { line: '::warning::a%3Ab%2Cc', name: 'warning', properties: {}, value: 'a%3Ab%2Cc' },
  { line: '::notice::100%250A', name: 'notice', properties: {}, value: '100%0A' },
  {
    line: '::error file=a.py, line=3::m',
    name: 'error',
    properties: { file: 'a.py', line: '3' },
    value: 'm',
  },
  { line: '::error junk,file=a.py,=x::m', name: 'error', properties: { file: 'a.py' }, value: 'm' },
  { line: '::error title=a=b::m', name: 'error', properties: { title: 'a=b' }, value: 'm' },
  { line: '::error __proto__=x::m', name: 'error', properties: { ['__proto__']: 'x' }, value: 'm' },
])('$line is the command $name', ({ line, name, properties, value }) => {
  const command = parseWorkflowCommand(line);
  expect(command).toEqual({ name, properties, value });
  expect(Object.getPrototypeOf(command?.properties)).toBe(Object.prototype);
});

test.each(['  ::error::indented', 'error::x', '::error', ':: error::x', '::::', 'text ::error::x', ''])(
  '%j is not a command',
  (line) => {
    expect(parseWorkflowCommand(line)).toBeNull();
  },
);
