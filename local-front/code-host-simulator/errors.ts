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
    /** The endpoint's page, where GitHub names it rather than the REST reference. */
    readonly docs = DOCS,
  ) {
    super(message);
  }

  get body(): Record<string, unknown> {
    return { message: this.message, ...this.extra, documentation_url: this.docs, status: String(this.status) };
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

/**
 * A fine-grained personal access token without the permission an endpoint needs, as GitHub
 * answers it: 403 with the endpoint's documentation and, in `X-Accepted-GitHub-Permissions`,
 * the permissions that would do (sets separated by `;`).
 */
export const notAccessible = (permissions: string, docs: string) =>
  new GitHubError(403, "Resource not accessible by personal access token", {}, { "x-accepted-github-permissions": permissions }, docs);

export const problemsParsingJson = () => new GitHubError(400, "Problems parsing JSON");

export const validationFailed = (...errors: FieldError[]) => new GitHubError(422, "Validation Failed", { errors });

/** GitHub's other 422: a request that is well formed but refused, with its reasons as plain strings. */
export const unprocessable = (reason: string) => new GitHubError(422, "Unprocessable Entity", { errors: [reason] });

export const payloadTooLarge = (limit: number) => new GitHubError(413, `Request body is larger than ${limit} bytes`);

export const unsupportedAccept = (accept: string) => new GitHubError(415, `Unsupported 'Accept' header: ${JSON.stringify(accept)}`);
