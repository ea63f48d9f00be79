import { expect, test } from 'vitest';
import { dvcDataOrigin } from '../../core/dvc/dvc-data-origin.js';

/** A pipeline in `pipelineDir` whose repository holds `files` (repository-relative). */
function filesOf(files: Record<string, string>, pipelineDir = '') {
  const inRepo = (path: string) => (pipelineDir ? `${pipelineDir}/${path}` : path);
  return {
    pipelineDir,
    exists: (repoPath: string) => repoPath in files,
    readFile: (path: string) => files[inRepo(path)],
  };
}

const IMPORT =
  'deps:\n- path: get-started/data.xml\n  repo:\n    url: https://github.com/iterative/dataset-registry\nouts:\n- path: data.xml\n';

interface Case {
  what: string;
  files: Record<string, string>;
  pipelineDir?: string;
  dep: string;
  origin: unknown;
}

test.each<Case>([
  {
    what: 'a file imported with dvc import',
    files: { 'data/data.xml.dvc': IMPORT },
    dep: 'data/data.xml',
    origin: {
      path: 'data/data.xml',
      dvcFile: 'data/data.xml.dvc',
      kind: 'import',
      source: 'https://github.com/iterative/dataset-registry',
    },
  },
  {
    what: 'a file inside a folder imported with dvc import-url',
    files: { 'images.dvc': 'deps:\n- path: s3://bucket/images\nouts:\n- path: images\n' },
    dep: './images/cat.png',
    origin: { path: 'images', dvcFile: 'images.dvc', kind: 'import-url', source: 's3://bucket/images' },
  },
  {
    what: 'a file added with dvc add, in a pipeline in a subfolder, with a wdir',
    files: { 'ml/raw/x.csv.dvc': 'wdir: .\nouts:\n- md5: 1\n  path: x.csv\n' },
    pipelineDir: 'ml',
    dep: 'raw/x.csv',
    origin: { path: 'raw/x.csv', dvcFile: 'raw/x.csv.dvc', kind: 'add', source: null },
  },
  {
    what: 'a .dvc file tracking other data',
    files: { 'data/data.xml.dvc': IMPORT.replace('path: data.xml', 'path: other.xml') },
    dep: 'data/data.xml',
    origin: null,
  },
  { what: 'a .dvc file that is not YAML', files: { 'data.dvc': 'outs: [' }, dep: 'data', origin: null },
  { what: 'a .dvc file without outs', files: { 'data.dvc': 'deps: []\n' }, dep: 'data', origin: null },
  { what: 'no .dvc file', files: {}, dep: 'data/data.xml', origin: null },
])('$what', ({ files, pipelineDir, dep, origin }) => {
  expect(dvcDataOrigin(dep, filesOf(files, pipelineDir))).toEqual(origin);
});
