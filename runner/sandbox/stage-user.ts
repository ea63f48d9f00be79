/** The dedicated, unprivileged user a runner starts stages as (`--stage-user`). */
export interface StageUser {
  /** The login name, as given. */
  name: string;
  uid: number;
  /** Its primary group, which the stages run with (and no supplementary group). */
  gid: number;
}

/** How a run's summary names the user: `fluksio-stage (uid 1001)`. */
export function describeStageUser(user: StageUser): string {
  return `${user.name} (uid ${user.uid})`;
}
