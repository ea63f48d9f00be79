/** The directory a run was started in is not inside a git work tree. */
export class NotAGitRepositoryError extends Error {
  constructor(
    readonly dir: string,
    options?: ErrorOptions,
  ) {
    super(
      `${dir} is not inside a git repository: fluksio stamps runs with a commit ` +
        `(run "git init" and commit your pipeline)`,
      options,
    );
    this.name = 'NotAGitRepositoryError';
  }
}
