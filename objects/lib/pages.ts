import type { Frame } from "./sse.js";

/** Pages are spliced from serialized entries, never parsed and re-encoded. */
function list(entries: Frame[]): string {
  return `[${entries.map((e) => e.json).join(",")}]`;
}

/** `{events, nextAfter, hasMore}`, oldest first; `nextAfter` is the cursor sent when the page is empty. */
export function forwardPage(entries: Frame[], nextAfter: number, hasMore: boolean): string {
  return `{"events":${list(entries)},"nextAfter":"${nextAfter}","hasMore":${hasMore}}`;
}

/** `{events, prevBefore, hasMore}`, newest first; `prevBefore` is null when the page is empty. */
export function reversePage(entries: Frame[], hasMore: boolean): string {
  const oldest = entries[entries.length - 1]?.seq;
  return `{"events":${list(entries)},"prevBefore":${oldest === undefined ? "null" : `"${oldest}"`},"hasMore":${hasMore}}`;
}
