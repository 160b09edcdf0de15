/** Who is making a request, as decided by authentication. No HTTP types here. */

export type Principal =
  | { kind: 'user'; userId: string; username: string; isRoot: boolean }
  | { kind: 'local-admin'; isRoot: true }
  | { kind: 'ingest'; repositoryId: string; tokenName: string };

export function isRoot(p: Principal): boolean {
  return p.kind !== 'ingest' && p.isRoot;
}
