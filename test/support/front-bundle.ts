import { resolve } from "node:path";
import { frontBundle } from "../../local-front/front-bundle.mjs";

/** The front built once before the files run, as `npm start` builds it: each file's fronts then start from it, none rebuilding it side by side. */
export default async function setup(): Promise<void> {
  await frontBundle(resolve(import.meta.dirname, "../.."));
}
