// The agentchat API as the page uses it (see README.md).

export interface SessionStats {
  tool_calls: Record<string, number>;
  errors: number;
  aborted_turns: number;
  turns: number;
}

export interface ChatSession {
  thread_id: string;
  user_id: string;
  project_id: string;
  title: string;
  message_count: number;
  llm_calls_count: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  last_message_at: string | null;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  stats: SessionStats;
  pinned: boolean;
}

export interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string; complete?: boolean };
}

export interface Message {
  id: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  created_at: string;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  metadata?: Record<string, unknown>;
}

export interface History {
  thread_id: string;
  title: string;
  messages: Message[];
  created_at: string;
  updated_at: string;
  llm_calls: number;
}

/** StreamEvent is one event of POST .../chat/stream. */
export type StreamEvent =
  | { type: 'content'; content: string; message_id: string; session_id: string }
  | { type: 'tool_call'; tool_call: ToolCall; session_id: string }
  | { type: 'tool_start'; tool_name: string; tool_call_id: string; session_id: string }
  | { type: 'tool_end'; tool_name: string; tool_call_id: string; tool_output: string; session_id: string }
  | { type: 'error'; error: string; session_id: string }
  | { type: 'heartbeat'; session_id: string }
  | ({ type: 'approval_required'; session_id: string } & PendingApproval)
  | { type: 'snapshot'; snapshot_id?: string; name?: string; error?: string; session_id: string }
  | { type: 'done'; session_id: string };

/** PendingApproval is a tool call waiting for the user's decision. */
export interface PendingApproval {
  tool_call_id: string;
  tool_name: string;
  arguments: string;
  summary: string;
}

/** Decision is the user's decision on one pending call. */
export interface Decision {
  tool_call_id: string;
  approve: boolean;
  note?: string;
}

export interface ChatRequest {
  message: string;
  session_id: string;
  copilot_mode?: string;
  approval?: string;
  approval_decision?: 'reject_all';
}

export interface LLMConfig {
  config_id: string;
  name: string;
  model_type: string;
  config: Record<string, unknown>;
  user_id: string | null;
  group_id: string | null;
  is_default: boolean;
  version: number;
  api_key_set?: boolean;
  api_key_hint?: string;
  source?: 'user' | 'group';
  group_name?: string | null;
}

export interface LLMConfigList {
  configs: LLMConfig[];
  default_config: LLMConfig | null;
  total: number;
}

export interface NewLLMConfig {
  name: string;
  model_type: string;
  is_default: boolean;
  config: Record<string, unknown>;
}

/** GNS3Project is one project of GET /v3/copilot/projects. */
export interface GNS3Project {
  project_id: string;
  name: string;
  status: string; // "opened" or "closed"
}

/** ApiError is a failed request, with the server's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** errorMessage reads the message of an error body, whatever its style. */
async function errorMessage(res: Response): Promise<string> {
  const fallback = `${res.status} ${res.statusText || 'error'}`.trim();
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return fallback;
  }
  if (body && typeof body === 'object') {
    const b = body as { message?: unknown; error?: { message?: unknown }; detail?: unknown };
    if (typeof b.message === 'string') return b.message;
    if (b.error && typeof b.error.message === 'string') return b.error.message;
    if (typeof b.detail === 'string') return b.detail;
  }
  return fallback;
}

export interface ApiOptions {
  /** token returns the bearer token, or "" in single-user mode. */
  token: () => string;
  /** unauthorized is told of every 401. */
  unauthorized: (message: string) => void;
}

const CONFIGS = '/v3/access/users/me/llm-model-configs';
const PROJECTS = '/v3/copilot/projects';

export class Api {
  constructor(private readonly o: ApiOptions) {}

  private chat(project: string): string {
    return `/v3/projects/${encodeURIComponent(project)}/chat`;
  }

  /**
   * request sends one request; a status of 400 or more throws an ApiError.
   * A quiet request does not tell a 401 (the page asks for no token).
   */
  async request(method: string, path: string, body?: unknown, signal?: AbortSignal, quiet = false, extra: Record<string, string> = {}): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json', ...extra };
    const token = this.o.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
      credentials: 'omit',
    });
    if (!res.ok) {
      const msg = await errorMessage(res);
      if (res.status === 401 && !quiet) this.o.unauthorized(msg);
      throw new ApiError(res.status, msg);
    }
    return res;
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(method, path, body);
    return (await res.json()) as T;
  }

  async listSessions(project: string, limit: number, cursor = ''): Promise<{ sessions: ChatSession[]; next: string }> {
    const q = new URLSearchParams({ limit: String(limit) });
    if (cursor) q.set('cursor', cursor);
    const res = await this.request('GET', `${this.chat(project)}/sessions?${q}`);
    return { sessions: (await res.json()) as ChatSession[], next: res.headers.get('X-Next-Cursor') ?? '' };
  }

  history(project: string, id: string, limit: number): Promise<History> {
    return this.json('GET', `${this.chat(project)}/sessions/${id}/history?limit=${limit}`);
  }

  rename(project: string, id: string, title: string): Promise<ChatSession> {
    return this.json('PATCH', `${this.chat(project)}/sessions/${id}`, { title });
  }

  setPinned(project: string, id: string, pinned: boolean): Promise<ChatSession> {
    return this.json(pinned ? 'PUT' : 'DELETE', `${this.chat(project)}/sessions/${id}/pin`);
  }

  async remove(project: string, id: string): Promise<void> {
    await this.request('DELETE', `${this.chat(project)}/sessions/${id}`);
  }

  async abort(project: string, id: string): Promise<void> {
    await this.request('POST', `${this.chat(project)}/sessions/${id}/abort`);
  }

  /** stream starts a turn; read its events with readEvents. */
  stream(project: string, req: ChatRequest, signal: AbortSignal): Promise<Response> {
    return this.request('POST', `${this.chat(project)}/stream`, { ...req, stream: true }, signal);
  }

  /**
   * rejoin reads session id's turn again (GET .../sessions/{id}/stream):
   * the events after lastEventId ("<turn id>:<n>"), then the live turn
   * until done; without an id the latest turn from its first event. With
   * running, only a turn still running (else 204). 204: nothing to rejoin;
   * the X-Turn-Id header names the turn.
   */
  rejoin(project: string, id: string, lastEventId: string, running: boolean, signal: AbortSignal): Promise<Response> {
    const q = running ? '?running=true' : '';
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (lastEventId) headers['Last-Event-ID'] = lastEventId;
    return this.request('GET', `${this.chat(project)}/sessions/${id}/stream${q}`, undefined, signal, false, headers);
  }

  /** approvals decides a paused turn's calls; read the turn that goes on with readEvents. */
  approvals(project: string, id: string, decisions: Decision[], signal: AbortSignal): Promise<Response> {
    return this.request('POST', `${this.chat(project)}/sessions/${id}/approvals`, { decisions }, signal);
  }

  /** undo restores the snapshot taken before the session's last changes. */
  undo(project: string, id: string): Promise<{ message: string; snapshot_id: string; name: string }> {
    return this.json('POST', `${this.chat(project)}/sessions/${id}/undo`);
  }

  /**
   * listProjects returns the user's GNS3 projects, opened first, when the
   * server has a GNS3 controller (204, no list, without one). Quiet: a
   * refusal only means there is no list to offer.
   */
  async listProjects(): Promise<GNS3Project[]> {
    const res = await this.request('GET', PROJECTS, undefined, undefined, true);
    if (res.status === 204) return [];
    return (await res.json()) as GNS3Project[];
  }

  listConfigs(): Promise<LLMConfigList> {
    return this.json('GET', CONFIGS);
  }

  createConfig(c: NewLLMConfig): Promise<LLMConfig> {
    return this.json('POST', CONFIGS, c);
  }

  setDefaultConfig(id: string): Promise<LLMConfig> {
    return this.json('PUT', `${CONFIGS}/default/${encodeURIComponent(id)}`);
  }

  async deleteConfig(id: string): Promise<void> {
    await this.request('DELETE', `${CONFIGS}/${encodeURIComponent(id)}`);
  }
}
