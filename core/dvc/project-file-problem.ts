import { posix } from 'node:path';

/**
 * Why a file that a `dvc.yaml` names (a params file, a `vars` file) is not read, or null
 * when it may be: fluksio reads such files only inside the repository, whoever wrote the
 * `dvc.yaml` — on a runner it is a pull request's author, and the run's params are written
 * into these files while its stages run. `pipelineDir` is dvc.yaml's folder in the
 * repository ('' at its root). Symbolic links are the reader's to resolve.
 */
export function projectFileProblem(name: string, pipelineDir: string): string | null {
  const path = name.replaceAll('\\', '/');
  if (path === '') return 'expected a file name';
  if (posix.isAbsolute(path) || /^[A-Za-z]:\//.test(path)) {
    return `${name} is an absolute path: expected a path relative to dvc.yaml, inside the repository`;
  }
  const inRepository = posix.normalize(posix.join(pipelineDir || '.', path));
  if (inRepository === '..' || inRepository.startsWith('../')) {
    return `${name} is outside the repository: expected a path relative to dvc.yaml, inside it`;
  }
  return null;
}
