/**
 * GitHub's paging: `per_page` (30 unless asked, at most 100) and 1-based `page`, with the
 * neighbours in a `Link` header of absolute URLs, which is what `octokit.paginate` follows.
 */
const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;

/** A query number as GitHub reads it: anything but a positive whole number leaves the default. */
function positive(value: string | null, fallback: number): number {
  const n = value !== null && /^\d{1,9}$/.test(value) ? Number(value) : 0;
  return n > 0 ? n : fallback;
}

export function paged<T>(all: T[], url: URL): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(positive(url.searchParams.get("per_page"), DEFAULT_PER_PAGE), MAX_PER_PAGE);
  const page = positive(url.searchParams.get("page"), 1);
  const last = Math.max(1, Math.ceil(all.length / perPage));
  const at = (n: number) => {
    const link = new URL(url);
    link.searchParams.set("page", String(n));
    return link.href;
  };
  const rels: [number, string][] = [];
  if (page > 1) rels.push([Math.min(page - 1, last), "prev"]);
  if (page < last) rels.push([page + 1, "next"], [last, "last"]);
  if (page > 1) rels.push([1, "first"]);
  const headers: Record<string, string> = rels.length ? { link: rels.map(([n, rel]) => `<${at(n)}>; rel="${rel}"`).join(", ") } : {};
  return { items: all.slice((page - 1) * perPage, page * perPage), headers };
}
