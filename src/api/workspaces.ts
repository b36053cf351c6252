/** Workspaces as the operator configures them (`workspaces.json`) and the policy a workspace owner sets. */
import * as z from "zod";
import { ENGINES, Name, ON_BUSY, PERMISSIONS, ROLES, THREAD_TYPES, WAIT_TIMEOUT } from "./threads.js";

/**
 * What a workspace decides for its threads. `defaults` fill the fields a spawn omits;
 * `maxLiveThreads` caps the workspace's live (not retired) threads.
 */
export const Policy = z
  .object({
    defaults: z
      .object({
        engine: z.enum(ENGINES).optional(),
        model: z.string().min(1).max(200).optional(),
        permissions: z.enum(PERMISSIONS).optional(),
        role: z.enum(ROLES).optional(),
        type: z.enum(THREAD_TYPES).optional(),
        cwd: z.string().startsWith("/").max(4096).optional(),
        account: z.string().min(1).max(200).optional(),
        approvalTimeoutMs: WAIT_TIMEOUT.optional(),
        questionTimeoutMs: WAIT_TIMEOUT.optional(),
        onBusy: z.enum(ON_BUSY).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();
export type Policy = z.infer<typeof Policy>;

export const WorkspaceConfig = z
  .object({
    name: Name,
    /** The workspace's repository on the code host, `owner/repo`. */
    slug: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "slug is owner/repo"),
    accounts: z.array(z.string().min(1).max(200)).default([]),
    /** Empty: every model is allowed. */
    allowedModels: z.array(z.string().min(1).max(200)).default([]),
    policy: Policy.default({ defaults: {} }),
    /** Repositories this workspace reads (docs/code.md): each a code root of that name, its checkout fenced from build threads. */
    repos: z.array(z.object({ name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/), path: z.string().startsWith("/").max(4096) }).strict()).default([]),
  })
  .strict();
export type WorkspaceConfig = z.infer<typeof WorkspaceConfig>;

export const WorkspacesFile = z
  .object({ workspaces: z.array(WorkspaceConfig) })
  .strict()
  .refine((f) => new Set(f.workspaces.map((w) => w.name)).size === f.workspaces.length, "workspace names must be unique");
export type WorkspacesFile = z.infer<typeof WorkspacesFile>;

/** `GET /workspaces`: each configured workspace, without its policy and repositories. */
export const WorkspaceList = z.object({ workspaces: z.array(WorkspaceConfig.pick({ name: true, slug: true, accounts: true, allowedModels: true })) });

/** `GET /workspaces/:name`: the configuration with the policy in force (the owner's, once set) and the head thread. */
export const WorkspaceView = WorkspaceConfig.extend({ head: z.string().nullable() });
export type WorkspaceView = z.infer<typeof WorkspaceView>;

/** `GET /workspaces/:name/head`. */
export const WorkspaceHead = z.object({ workspace: z.string(), head: z.string().nullable() });

/** `PUT /workspaces/:name/policy`: the policy now in force. */
export const PolicySet = z.object({ workspace: z.string(), policy: Policy });
