/** The path of a run's endpoints (`/api/v1/runs/:id`), the id escaped. */
export function runPath(runId: string): string {
  return `/api/v1/runs/${encodeURIComponent(runId)}`;
}

/** The path of a blob's endpoints (`/api/v1/blobs/sha256:…`), its digest's colon kept. */
export function blobPath(digest: string): string {
  return `/api/v1/blobs/${encodeURIComponent(digest).replace('%3A', ':')}`;
}
