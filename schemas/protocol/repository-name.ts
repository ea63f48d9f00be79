import { z } from 'zod';

/**
 * A repository as `owner/name`: a GitHub repository, or for a `cloneUrl` elsewhere the
 * URL's host (`local` for `file://`) and its path (DESIGN §6). The owner never holds a
 * slash; the name may (a path).
 */
export const RepositoryName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.\-/]+$/, { error: 'expected a repository as "owner/name"' })
  .refine((name) => !name.split('/').some((part) => part === '..' || part === '.'), {
    error: 'a repository name may not contain "." or ".." segments',
  });
export type RepositoryName = z.infer<typeof RepositoryName>;

/** The owner part of a repository name. */
export function ownerOf(repository: string): string {
  return repository.slice(0, repository.indexOf('/'));
}
