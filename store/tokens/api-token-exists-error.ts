/** An API token is being added under the name of a live one; `fluksio token add` answers it as bad input. */
export class ApiTokenExistsError extends Error {
  constructor(readonly tokenName: string) {
    super(
      `An API token named "${tokenName}" exists already; choose another name, or revoke it first (fluksio token revoke ${tokenName})`,
    );
    this.name = 'ApiTokenExistsError';
  }
}
