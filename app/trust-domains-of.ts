/**
 * The cache trust domains a run may read (DESIGN §5): a trusted run reads only `trusted`
 * entries; a fork PR's run (`pr:<n>`) reads trusted entries and its own PR's.
 */
export function trustDomainsOf(trustDomain: string): string[] {
  return trustDomain === 'trusted' ? ['trusted'] : ['trusted', trustDomain];
}
