/** What the pending changesets (.changeset/*.md) will do to the contract at the next `pnpm version-packages`. */
import getReleasePlan from '@changesets/get-release-plan';

export const CONTRACT = '@animal-store/contract';

/** `major`, `minor`, `patch` or `none`: the contract's bump, with the `fixed` group applied. */
export async function contractBump(workspaceRoot: string): Promise<string> {
  const plan = await getReleasePlan(workspaceRoot);
  return plan.releases.find((release) => release.name === CONTRACT)?.type ?? 'none';
}
