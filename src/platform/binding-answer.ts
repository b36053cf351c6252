/**
 * The ENGINES and ACCOUNTS bindings name services the local front serves (`npm start`).
 * Under plain `wrangler dev` nobody serves them, and wrangler answers every call with a
 * 503 whose body is a sentence of its own, not JSON though labelled so. The services
 * themselves always answer JSON, so an answer that does not parse is that missing
 * service, and becomes a refusal that says how to run with it.
 */
export const ENGINE_HOST_NOT_CONNECTED =
  "the engine host is not connected: this worker runs without the runtime's front (plain `wrangler dev` serves threads and their logs, but runs no turn); start the runtime with `npm start` to run turns";
export const ACCOUNT_POOL_NOT_CONNECTED =
  "the account pool is not connected: this worker runs without the runtime's front (plain `wrangler dev` has no accounts, models or completions); start the runtime with `npm start`";

export const CODE_SERVICE_NOT_CONNECTED =
  "the code service is not connected: this worker runs without the runtime's front (plain `wrangler dev` reads no repository); start the runtime with `npm start`";

/** `res` as the service wrote it, or, when no service wrote it, `missing` as a JSON 503. */
export async function bindingAnswer(res: Response, missing: Record<string, unknown>): Promise<Response> {
  if (res.ok) return res;
  const text = await res.text();
  try {
    JSON.parse(text);
  } catch {
    return Response.json(missing, { status: 503 });
  }
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
}
