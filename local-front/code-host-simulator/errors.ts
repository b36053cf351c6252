/**
 * GitHub's error answers. Handlers throw them; the server renders them with the headers
 * every answer carries. Clients match on `status` and `message`, so both copy GitHub's.
 */
const DOCS = "https://docs.github.com/rest";

export class GitHubError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get body(): Record<string, unknown> {
    return { message: this.message, ...this.extra, documentation_url: DOCS, status: String(this.status) };
  }
}

/** One entry of a 422's `errors`, as GitHub words them: the resource, the field, and what is wrong with it. */
export interface FieldError {
  resource: string;
  field: string;
  code: "missing_field" | "invalid" | "already_exists" | "custom";
  message?: string;
}

export const notFound = (message = "Not Found") => new GitHubError(404, message);

export const badCredentials = () => new GitHubError(401, "Bad credentials");

export const problemsParsingJson = () => new GitHubError(400, "Problems parsing JSON");

export const validationFailed = (...errors: FieldError[]) => new GitHubError(422, "Validation Failed", { errors });

/** GitHub's other 422: a request that is well formed but refused, with its reasons as plain strings. */
export const unprocessable = (reason: string) => new GitHubError(422, "Unprocessable Entity", { errors: [reason] });

export const payloadTooLarge = (limit: number) => new GitHubError(413, `Request body is larger than ${limit} bytes`);

export const unsupportedAccept = (accept: string) => new GitHubError(415, `Unsupported 'Accept' header: ${JSON.stringify(accept)}`);
