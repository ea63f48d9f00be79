/**
 * GitHub's limits on a check run (REST "Create a check run"). The summary and text limits
 * are documented as 65,535 characters but enforced in UTF-8 bytes ("summary exceeds a
 * maximum bytesize of 65535", github/docs#35252), so every bound here counts bytes, which
 * also bounds characters. Annotation fields are "64 KB": read as the smaller of 64,000 and
 * 65,536 bytes. A create or update takes at most 50 annotations; more go in further
 * updates, which GitHub appends.
 */
export const GITHUB_LIMITS = {
  title: 255,
  summaryBytes: 65_535,
  textBytes: 65_535,
  annotationBytes: 64_000,
  annotationTitle: 255,
  annotationsPerRequest: 50,
  actions: 3,
  actionLabel: 20,
  actionDescription: 40,
  actionIdentifier: 20,
  checkName: 100,
} as const;
