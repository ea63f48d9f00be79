import { describe, expect, test } from 'vitest';
import { annotationPages, githubAnnotations } from '../../present/github/github-annotation.js';
import type { Annotation } from '../../schemas/annotation.js';

const numbers = (count: number) => Array.from({ length: count }, (_, index) => index);

describe('annotations go 50 per request (GitHub appends each request’s)', () => {
  test.each<[string, number, number, number[]]>([
    ['none: one request carries the output', 0, 0, [0]],
    ['exactly 50', 50, 0, [50]],
    ['51', 51, 0, [50, 1]],
    ['120', 120, 0, [50, 50, 20]],
    ['120, 30 already sent', 120, 30, [50, 40]],
    ['120, all sent: the output alone', 120, 120, [0]],
  ])('%s', (_name, total, sent, sizes) => {
    const pages = annotationPages(numbers(total), sent);
    expect(pages.map((page) => page.length)).toEqual(sizes);
    expect(pages.flat()).toEqual(numbers(total).slice(sent));
  });
});

describe('only annotations on repository files reach GitHub', () => {
  const note = (path: string | null): Annotation => ({
    stage: 'train',
    path,
    line: null,
    level: 'error',
    message: '',
    title: null,
  });

  test.each<[string | null, string | null]>([
    ['./src/x.py', 'src/x.py'],
    ['src\\x.py', 'src/x.py'],
    ['/etc/passwd', null],
    ['../outside.py', null],
    ['C:/x.py', null],
    [null, null],
  ])('%s', (path, expected) => {
    const [converted] = githubAnnotations([note(path)]);
    expect(converted?.path ?? null).toBe(expected);
  });

  test('an empty message says where it came from, and the title names the stage', () => {
    expect(githubAnnotations([note('x.py')])).toEqual([
      {
        path: 'x.py',
        start_line: 1,
        end_line: 1,
        annotation_level: 'failure',
        message: 'error in stage train',
        title: 'stage train',
      },
    ]);
  });
});
