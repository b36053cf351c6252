/** What a zod error holds that a sentence needs: each issue's path and message. */
export interface Issues {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}

/**
 * The one sentence a refusal gives for what zod refused, in the worker and the front
 * alike: each issue as `path: message`, the whole value named `whole` when the issue is
 * about it, joined by "; ".
 */
export function issuesSentence(error: Issues, whole = "body"): string {
  return error.issues.map((i) => `${i.path.map(String).join(".") || whole}: ${i.message}`).join("; ");
}
