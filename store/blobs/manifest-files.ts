import { formatPath } from '../../core/problem.js';
import { messageOf } from '../../core/text/message-of.js';
import { DirManifest } from '../../schemas/out-record.js';

/**
 * What reading a directory out's manifest gave gc: the digests of the directory's files,
 * or why it could not be read (gone, damaged, too large, an error of the store).
 */
export type ManifestRead = { files: readonly string[] } | { unreadable: string };

/** The files a manifest's bytes name, or why those bytes are not a directory manifest. */
export function manifestFiles(bytes: Buffer): ManifestRead {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return { unreadable: `damaged: not JSON (${messageOf(error)})` };
  }
  const parsed = DirManifest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? formatPath(issue.path) : '';
    return {
      unreadable: `damaged: not a directory manifest (${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'})`,
    };
  }
  return { files: parsed.data.files.map((file) => file.digest) };
}
