import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { open, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { InterpreterDigests } from '../../runner/keys/interpreter-digests.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-interpreter-digests-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('two callers asking for one file at once share one read of it', async () => {
  // A FIFO gives its bytes to one reader only: a second read of it would wait forever for
  // a writer that never comes.
  const program = path.join(dir, 'python3');
  execFileSync('mkfifo', [program]);
  const digests = new InterpreterDigests(null);
  const both = Promise.all([digests.digestOf(program), digests.digestOf(program)]);
  const writer = await open(program, 'w');
  await writer.write('#!/bin/sh\n');
  await writer.close();

  const expected = `sha256:${createHash('sha256').update('#!/bin/sh\n').digest('hex')}`;
  expect(await both).toEqual([expected, expected]);
});
