import { OVERLAP_LABEL, overlapMarker, type OverlapAnswer, type OverlapPair, type OverlapRequest } from "../../../src/api/code-host.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, type Outcome, type Refusal } from "../../../src/api/outcome.js";
import { overlapPairs, type OverlapPull, type PairVerdict } from "../../../src/rules/pr-overlap.js";
import { deadline, onHost, type HostClient } from "./clients.js";
import { summaryOf } from "./reads.js";
import { OneAtATime } from "../one-at-a-time.js";

/** Files read of one pull request: GitHub lists at most 3,000; the pass compares the first 300. */
const FILES_READ = 300;
/** Pull requests whose files are fetched at once. */
const FETCHES_AT_ONCE = 6;

/** Passes over one repository run one at a time, so two never both act on a pair. */
const passes = new OneAtATime();

/** Text from a pull request (a title, a path) quoted in a comment: no markup that could pose as a marker or hide text, no code span to break out of, no mention that would ping someone. */
const quoted = (text: string) => text.replace(/[\r\n]+/g, " ").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/`/g, "'").replace(/@/g, "@\u200b");

function commentFor(v: PairVerdict, olderTitle: string): string {
  const where = v.evidence.overlappingHunks.slice(0, 3).map((h) => `\`${quoted(h.path)}\` (base lines ${h.newer})`);
  const files = v.evidence.sharedFiles.slice(0, 5).map((f) => `\`${quoted(f)}\``);
  return [
    `This pull request may duplicate #${v.older} (${quoted(olderTitle)}).`,
    "",
    where.length ? `Both change the same lines: ${where.join(", ")}.` : files.length ? `Both change ${files.join(", ")}.` : "Their descriptions say much the same.",
    `Overlap score ${v.score} (lines ${v.evidence.lineOverlap}, added code ${v.evidence.addedSimilarity}, text ${v.evidence.textSimilarity}).`,
    "If they do the same work, one of them can be closed; if not, this note can be ignored.",
    "",
    overlapMarker(v.older, v.newer),
  ].join("\n");
}

/** What one duplicate needs of the pass: the older one's title for the comment, and whether the newer one has the label already. */
interface Target {
  verdict: PairVerdict;
  olderTitle: string;
  labelled: boolean;
}

/**
 * Acts on one duplicate at most once: the marker in an earlier comment of the runtime's own
 * login on the newer pull request says a pass already did, whatever happened to the
 * runtime since (anyone else's copy of the marker counts for nothing). The label is added
 * when the newer one lacks it, so a pass cut between the comment and the label finishes
 * the job. With `mayWrite` false (the host refused an earlier write of this pass) nothing
 * is written: a duplicate not already done is `not-permitted`.
 */
async function act(client: HostClient, owner: string, repo: string, { verdict: v, olderTitle, labelled }: Target, mayWrite: boolean): Promise<Outcome<OverlapPair["action"]>> {
  const what = `pull request ${owner}/${repo}#${v.newer}`;
  const marker = overlapMarker(v.older, v.newer);
  const me = await client.login();
  if (!me.ok) return me;
  const earlier = await onHost(client, what, (o) => o.paginate(o.rest.issues.listComments, { owner, repo, issue_number: v.newer, per_page: 100, ...deadline() }));
  if (!earlier.ok) return earlier;
  // The marker ends the runtime's comment; what the comment quotes cannot pose as it.
  const done = earlier.value.some((c) => c.user?.login === me.value && (c.body ?? "").trimEnd().endsWith(marker));
  if (done && labelled) return ok("done-before");
  if (!mayWrite) return ok("not-permitted");
  if (!done) {
    const posted = await onHost(client, what, (o) => o.rest.issues.createComment({ owner, repo, issue_number: v.newer, body: commentFor(v, olderTitle), ...deadline() }));
    if (!posted.ok) return posted;
  }
  if (!labelled) {
    const added = await onHost(client, what, (o) => o.rest.issues.addLabels({ owner, repo, issue_number: v.newer, labels: [OVERLAP_LABEL], ...deadline() }));
    if (!added.ok) return added;
  }
  return ok(done ? "done-before" : "acted");
}

/** `POST /github/overlap` (docs/code-host.md, "The overlap pass"). */
export function overlapPass(client: HostClient, req: OverlapRequest): Promise<Outcome<OverlapAnswer>> {
  const [owner, repo] = req.repo.split("/") as [string, string];
  return passes.run(req.repo.toLowerCase(), async (): Promise<Outcome<OverlapAnswer>> => {
    const limit = req.limit ?? 100;
    const listed = await onHost(client, `repository ${req.repo}`, async (o) => {
      const pulls = [];
      for await (const page of o.paginate.iterator(o.rest.pulls.list, { owner, repo, state: "open", sort: "created", direction: "desc", per_page: Math.min(100, limit), ...deadline() })) {
        pulls.push(...page.data);
        if (pulls.length >= limit) break;
      }
      return pulls.slice(0, limit);
    });
    if (!listed.ok) return listed;
    const pulls: OverlapPull[] = [];
    const titles = new Map<number, string>();
    const labelled = new Set<number>();
    // Pages of a list that changes as it is read can show one pull request twice.
    const queue = [...new Map(listed.value.map((p) => [p.number, p])).values()];
    const stop: { refusal: Refusal | null } = { refusal: null };
    await Promise.all(
      Array.from({ length: FETCHES_AT_ONCE }, async () => {
        for (let p = queue.shift(); p && !stop.refusal; p = queue.shift()) {
          const s = summaryOf(p);
          const files = await onHost(client, `pull request ${req.repo}#${s.number}`, async (o) => {
            const out = [];
            for await (const page of o.paginate.iterator(o.rest.pulls.listFiles, { owner, repo, pull_number: s.number, per_page: 100, ...deadline() })) {
              out.push(...page.data);
              if (out.length >= FILES_READ) break;
            }
            return out.slice(0, FILES_READ);
          });
          if (!files.ok) {
            stop.refusal = files;
            return;
          }
          titles.set(s.number, s.title);
          if (s.labels.some((l) => l.toLowerCase() === OVERLAP_LABEL)) labelled.add(s.number);
          pulls.push({ number: s.number, title: s.title, body: s.body, createdAt: s.createdAt, files: files.value.map((f) => ({ path: f.filename, previousPath: f.previous_filename ?? null, patch: f.patch ?? null })) });
        }
      }),
    );
    if (stop.refusal) return stop.refusal;
    const pairs: OverlapPair[] = [];
    // The host's refusal of a write: the account may not write to the repository, so the pass asks no more.
    let forbidden: Refusal | null = null;
    for (const v of overlapPairs(pulls)) {
      if (v.relation !== "duplicate") {
        pairs.push({ ...v, action: "none" });
        continue;
      }
      if (!req.act) {
        pairs.push({ ...v, action: "would-act" });
        continue;
      }
      const done = await act(client, owner, repo, { verdict: v, olderTitle: titles.get(v.older) ?? "", labelled: labelled.has(v.newer) }, forbidden === null);
      if (!done.ok && done.body.code === CODES.codeHostForbidden) {
        forbidden = done;
        pairs.push({ ...v, action: "not-permitted" });
        continue;
      }
      if (!done.ok) return done;
      pairs.push({ ...v, action: done.value });
    }
    const answer: OverlapAnswer = { repo: req.repo, acting: req.act, considered: pulls.length, pairs };
    if (forbidden) answer.notPermitted = { error: forbidden.body.error, code: CODES.codeHostForbidden };
    return ok(answer);
  });
}
