"""Coding agent on a TypeScript/Node repository (shape "js-coding"): shell(cmd) running
npm/npx/jest/tsc/eslint/git, read(path, start_line, end_line), apply_diff(path, diff).
Invented runs.

Label convention: label is "loop-free" or "loop"; loop_start = 0-based index (tool calls
only) of the first tool call that repeats an attempt that had already come back futile
(the first repetition, not the first attempt); None for loop-free runs."""

# ruff: noqa

import random

from harness import Run

SHAPE = "js-coding"


# ---------------------------------------------------------------- helpers


def numbered(code, start):
    lines = code.strip("\n").split("\n")
    return "\n".join(f"{start + i:>4} | {ln}" for i, ln in enumerate(lines))


def read_result(path, code, start, end, total=None):
    body = numbered(code, start)
    n = len(code.strip("\n").split("\n"))
    if total is not None and start + n - 1 >= total:
        return f"{path} (lines {start}-{total} of {total})\n{body}\n(end of file)"
    return f"{path} (lines {start}-{end})\n{body}"


def read_slice(r, path, code, start, end, total=None):
    """A `read` call of lines start..end of path, answered with read_result()."""
    r.call(
        "read",
        {"path": path, "start_line": start, "end_line": end},
        read_result(path, code, start, end, total=total),
        dur=0.2,
    )


def apply_diff(r, path, diff, result="applied 1 hunk", error=False):
    """An `apply_diff` call of diff to path."""
    r.call("apply_diff", {"path": path, "diff": diff}, result, error=error, dur=0.1)


def shell(r, cmd, out, error=False, dur=0.8):
    """A `shell` call running cmd."""
    r.call("shell", {"cmd": cmd}, out, error=error, dur=dur)


def jest_time(rng, lo=2.4, hi=7.5):
    t = rng.uniform(lo, hi)
    return f"{t:.3f} s, estimated {max(1, round(t + rng.uniform(-0.6, 1.2)))} s"


def jest_summary(
    rng, suites_f, suites_p, tests_f, tests_p, snap="0 total", pattern=None, lo=2.4, hi=7.5
):
    st = suites_f + suites_p
    tt = tests_f + tests_p
    s_line = (
        f"{suites_f} failed, {suites_p} passed, {st} total"
        if suites_f
        else f"{suites_p} passed, {st} total"
    )
    t_line = (
        f"{tests_f} failed, {tests_p} passed, {tt} total"
        if tests_f
        else f"{tests_p} passed, {tt} total"
    )
    out = (
        f"Test Suites: {s_line}\n"
        f"Tests:       {t_line}\n"
        f"Snapshots:   {snap}\n"
        f"Time:        {jest_time(rng, lo, hi)}\n"
    )
    out += f"Ran all test suites matching /{pattern}/i." if pattern else "Ran all test suites."
    return out


def npx_jest(r, rng, target, report, counts, dur, lo=2.4, hi=7.5):
    """`npx jest target`: report, then the summary for counts (suites_f, suites_p, tests_f, tests_p)."""
    shell(
        r,
        f"npx jest {target}",
        report + jest_summary(rng, *counts, pattern=target.replace("/", "\\/"), lo=lo, hi=hi),
        error=counts[0] > 0,
        dur=dur,
    )


def npm_log_stamp(rng, base_min):
    h = 9 + base_min // 60
    m = base_min % 60
    s = rng.randint(0, 59)
    ms = rng.randint(0, 999)
    return f"2024-03-11T{h:02d}_{m:02d}_{s:02d}_{ms:03d}Z"


# ---------------------------------------------------------------- loop-free 1


def jsdev_fix_suite_progress():
    """Failing suite, four failures; each jest run after a fix shows fewer / different failures."""
    rng = random.Random(1101)
    r = Run("jsdev_fix_suite_progress", SHAPE, "loop-free", None)
    r.turn("CI is red on acme-sdk. I'll run the whole jest suite first to see what fails.")
    shell(
        r,
        "npx jest",
        " FAIL  src/api/__tests__/paginate.test.ts\n"
        "  ● paginate › yields every item across pages\n\n"
        "    expect(received).toHaveLength(expected)\n\n"
        "    Expected length: 45\n    Received length: 40\n\n"
        "      31 |     const all = await collect(paginate(fetchPage, { pageSize: 20 }));\n"
        "    > 32 |     expect(all).toHaveLength(45);\n"
        "         |                 ^\n\n"
        "      at Object.<anonymous> (src/api/__tests__/paginate.test.ts:32:17)\n\n"
        "  ● paginate › stops when next cursor is null\n\n"
        "    expect(jest.fn()).toHaveBeenCalledTimes(expected)\n\n"
        "    Expected number of calls: 3\n    Received number of calls: 2\n\n"
        "      at Object.<anonymous> (src/api/__tests__/paginate.test.ts:47:25)\n\n"
        " FAIL  src/api/__tests__/client.test.ts\n"
        "  ● ApiClient › retries on 503 with exponential backoff\n\n"
        "    expect(received).toEqual(expected) // deep equality\n\n"
        "    - Expected  - 1\n    + Received  + 1\n\n"
        "      Array [\n        200,\n        400,\n    -   800,\n    +   600,\n      ]\n\n"
        "      at Object.<anonymous> (src/api/__tests__/client.test.ts:71:27)\n\n"
        " FAIL  src/api/__tests__/errors.test.ts\n"
        "  ● ApiError › includes request id in message\n\n"
        '    expect(received).toContain(expected) // indexOf\n\n    Expected substring: "req_8f2c91"\n'
        '    Received string:    "ApiError: 503 Service Unavailable"\n\n'
        "      at Object.<anonymous> (src/api/__tests__/errors.test.ts:18:30)\n\n"
        " PASS  src/cache/__tests__/lru.test.ts\n PASS  src/util/__tests__/env.test.ts\n"
        " PASS  src/__tests__/index.test.ts\n\n" + jest_summary(rng, 3, 3, 4, 38, lo=5.0, hi=7.0),
        error=True,
        dur=6.8,
    )
    r.turn(
        "Four failures in three suites. The pagination ones look like an off-by-one on the last page. Reading paginate.ts."
    )
    read_slice(
        r,
        "src/api/paginate.ts",
        """
import type { Page, PageFetcher } from './types';

export interface PaginateOptions {
  pageSize?: number;
  startCursor?: string | null;
}

export async function* paginate<T>(
  fetchPage: PageFetcher<T>,
  opts: PaginateOptions = {},
): AsyncGenerator<T> {
  const pageSize = opts.pageSize ?? 50;
  let cursor: string | null = opts.startCursor ?? null;
  let page: Page<T>;
  do {
    page = await fetchPage({ cursor, limit: pageSize });
    for (const item of page.items) yield item;
    cursor = page.nextCursor;
  } while (cursor && page.items.length === pageSize);
}
""",
        1,
        40,
        total=20,
    )
    apply_diff(
        r,
        "src/api/paginate.ts",
        "@@ -17,4 +17,4 @@\n     for (const item of page.items) yield item;\n     cursor = page.nextCursor;\n-  } while (cursor && page.items.length === pageSize);\n+  } while (cursor !== null);\n }\n",
    )
    npx_jest(
        r,
        rng,
        "src/api/__tests__/paginate.test.ts",
        " PASS  src/api/__tests__/paginate.test.ts\n  paginate\n    ✓ yields every item across pages (4 ms)\n"
        "    ✓ stops when next cursor is null (1 ms)\n    ✓ respects startCursor (1 ms)\n"
        "    ✓ uses default page size of 50 (1 ms)\n    ✓ propagates fetch errors (3 ms)\n\n",
        (0, 1, 0, 5),
        dur=2.1,
        lo=1.1,
        hi=1.9,
    )
    shell(
        r,
        "npx jest",
        " FAIL  src/api/__tests__/client.test.ts\n"
        "  ● ApiClient › retries on 503 with exponential backoff\n\n"
        "    expect(received).toEqual(expected) // deep equality\n\n"
        "    - Expected  - 1\n    + Received  + 1\n\n"
        "      Array [\n        200,\n        400,\n    -   800,\n    +   600,\n      ]\n\n"
        "      at Object.<anonymous> (src/api/__tests__/client.test.ts:71:27)\n\n"
        " FAIL  src/api/__tests__/errors.test.ts\n"
        "  ● ApiError › includes request id in message\n\n"
        '    Expected substring: "req_8f2c91"\n    Received string:    "ApiError: 503 Service Unavailable"\n\n'
        " PASS  src/api/__tests__/paginate.test.ts\n PASS  src/cache/__tests__/lru.test.ts\n"
        " PASS  src/util/__tests__/env.test.ts\n PASS  src/__tests__/index.test.ts\n\n"
        + jest_summary(rng, 2, 4, 2, 40, lo=5.0, hi=7.0),
        error=True,
        dur=6.2,
    )
    r.turn(
        "Pagination fixed, 2 left. Backoff delays are 200, 400, 600 -> linear instead of doubling. Looking at the retry code and its test."
    )
    read_slice(
        r,
        "src/api/client.ts",
        """
  private async send<T>(req: RequestSpec): Promise<T> {
    const max = this.opts.maxRetries ?? 3;
    let attempt = 0;
    for (;;) {
      const res = await this.transport(req);
      if (res.status < 500) return this.decode<T>(res);
      attempt++;
      if (attempt > max) {
        throw new ApiError(res.status, res.statusText);
      }
      const delay = this.opts.baseDelayMs * (attempt + 1) - this.opts.baseDelayMs * 0;
      await this.sleep(delay);
    }
  }
""",
        30,
        70,
    )
    read_slice(
        r,
        "src/api/__tests__/client.test.ts",
        """
  it('retries on 503 with exponential backoff', async () => {
    const sleep = jest.fn().mockResolvedValue(undefined);
    const transport = jest
      .fn()
      .mockResolvedValueOnce(res(503))
      .mockResolvedValueOnce(res(503))
      .mockResolvedValueOnce(res(503))
      .mockResolvedValueOnce(res(200, { ok: true }));
    const client = new ApiClient({ transport, sleep, baseDelayMs: 200, maxRetries: 3 });
    await client.get('/v1/ping');
    expect(transport).toHaveBeenCalledTimes(4);
    expect(sleep.mock.calls.map((c) => c[0])).toEqual([200, 400, 800]);
  });

  it('gives up after maxRetries', async () => {
    const transport = jest.fn().mockResolvedValue(res(503, {}, { 'x-request-id': 'req_8f2c91' }));
    const client = new ApiClient({ transport, sleep: async () => {}, baseDelayMs: 1, maxRetries: 3 });
    await expect(client.get('/v1/ping')).rejects.toThrow(ApiError);
    expect(transport).toHaveBeenCalledTimes(4);
  });
""",
        55,
        80,
    )
    apply_diff(
        r,
        "src/api/client.ts",
        "@@ -40,3 +40,3 @@\n       }\n-      const delay = this.opts.baseDelayMs * (attempt + 1) - this.opts.baseDelayMs * 0;\n+      const delay = this.opts.baseDelayMs * 2 ** attempt;\n       await this.sleep(delay);\n",
    )
    npx_jest(
        r,
        rng,
        "src/api/__tests__/client.test.ts",
        " FAIL  src/api/__tests__/client.test.ts\n"
        "  ● ApiClient › retries on 503 with exponential backoff\n\n"
        "    expect(received).toEqual(expected) // deep equality\n\n"
        "    - Expected  - 3\n    + Received  + 3\n\n"
        "      Array [\n    -   200,\n    -   400,\n    -   800,\n    +   400,\n    +   800,\n    +   1600,\n      ]\n\n"
        "      at Object.<anonymous> (src/api/__tests__/client.test.ts:67:45)\n\n"
        "  ApiClient\n    ✓ decodes json bodies (3 ms)\n    ✕ retries on 503 with exponential backoff (5 ms)\n"
        "    ✓ gives up after maxRetries (2 ms)\n    ✓ does not retry 4xx (1 ms)\n\n",
        (1, 0, 1, 7),
        dur=2.3,
        lo=1.2,
        hi=2.0,
    )
    r.turn(
        "Now doubling but shifted by one: attempt is already incremented before the delay. Use 2 ** (attempt - 1)."
    )
    apply_diff(
        r,
        "src/api/client.ts",
        "@@ -40,3 +40,3 @@\n       }\n-      const delay = this.opts.baseDelayMs * 2 ** attempt;\n+      const delay = this.opts.baseDelayMs * 2 ** (attempt - 1);\n       await this.sleep(delay);\n",
    )
    npx_jest(
        r,
        rng,
        "src/api/__tests__/client.test.ts",
        " PASS  src/api/__tests__/client.test.ts\n  ApiClient\n    ✓ decodes json bodies (2 ms)\n"
        "    ✓ retries on 503 with exponential backoff (3 ms)\n    ✓ gives up after maxRetries (2 ms)\n"
        "    ✓ does not retry 4xx (1 ms)\n\n",
        (0, 1, 0, 8),
        dur=2.0,
        lo=1.2,
        hi=2.0,
    )
    read_slice(
        r,
        "src/api/errors.ts",
        """
export class ApiError extends Error {
  readonly status: number;
  readonly requestId?: string;

  constructor(status: number, statusText: string, requestId?: string) {
    super(`ApiError: ${status} ${statusText}`);
    this.name = 'ApiError';
    this.status = status;
    this.requestId = requestId;
  }
}
""",
        1,
        30,
        total=11,
    )
    apply_diff(
        r,
        "src/api/errors.ts",
        "@@ -5,3 +5,4 @@\n   constructor(status: number, statusText: string, requestId?: string) {\n-    super(`ApiError: ${status} ${statusText}`);\n+    const suffix = requestId ? ` (request id: ${requestId})` : '';\n+    super(`ApiError: ${status} ${statusText}${suffix}`);\n     this.name = 'ApiError';\n"
        "@@ src/api/client.ts @@\n-        throw new ApiError(res.status, res.statusText);\n+        throw new ApiError(res.status, res.statusText, res.headers['x-request-id']);\n",
        "applied 2 hunks",
    )
    shell(
        r,
        "npx jest",
        " PASS  src/api/__tests__/paginate.test.ts\n PASS  src/api/__tests__/client.test.ts\n"
        " PASS  src/api/__tests__/errors.test.ts\n PASS  src/cache/__tests__/lru.test.ts\n"
        " PASS  src/util/__tests__/env.test.ts\n PASS  src/__tests__/index.test.ts\n\n"
        + jest_summary(rng, 0, 6, 0, 42, lo=5.0, hi=7.0),
        dur=5.9,
    )
    shell(r, "npx tsc --noEmit", "(no output, exit code 0)", dur=4.7)
    shell(
        r,
        "git diff --stat",
        " src/api/client.ts   | 4 ++--\n src/api/errors.ts   | 3 ++-\n src/api/paginate.ts | 2 +-\n"
        " 3 files changed, 5 insertions(+), 4 deletions(-)",
        dur=0.1,
    )
    r.turn(
        "All 42 tests pass and tsc is clean. Summary: fixed pagination termination, exponential backoff, request id in ApiError message."
    )
    return r


# ---------------------------------------------------------------- loop-free 2


TSC_ERRORS = [
    (
        "client",
        "src/api/client.ts(42,17): error TS2339: Property 'retry' does not exist on type 'Options'.",
    ),
    (
        "client",
        "src/api/client.ts(88,9): error TS2322: Type 'string | undefined' is not assignable to type 'string'.\n"
        "  Type 'undefined' is not assignable to type 'string'.",
    ),
    (
        "paginate",
        "src/api/paginate.ts(23,29): error TS7006: Parameter 'page' implicitly has an 'any' type.",
    ),
    ("lru", "src/cache/lru.ts(51,12): error TS2532: Object is possibly 'undefined'."),
    (
        "lru",
        "src/cache/lru.ts(64,5): error TS2322: Type 'V | undefined' is not assignable to type 'V'.\n"
        "  'V' could be instantiated with an arbitrary type which could be unrelated to 'V | undefined'.",
    ),
    (
        "env",
        "src/util/env.ts(9,10): error TS7053: Element implicitly has an 'any' type because expression of type 'string' can't be used to index type '{}'.\n"
        "  No index signature with a parameter of type 'string' was found on type '{}'.",
    ),
    (
        "index",
        "src/index.ts(15,22): error TS2345: Argument of type 'number | null' is not assignable to parameter of type 'number'.\n"
        "  Type 'null' is not assignable to type 'number'.",
    ),
]
TSC_FILES = {
    "client": "src/api/client.ts:42",
    "paginate": "src/api/paginate.ts:23",
    "lru": "src/cache/lru.ts:51",
    "env": "src/util/env.ts:9",
    "index": "src/index.ts:15",
}


def tsc_output(remaining):
    errs = [e for k, e in TSC_ERRORS if k in remaining]
    if not errs:
        return "(no output, exit code 0)"
    files = [k for k in TSC_FILES if k in remaining]
    n = len(errs)
    head = "\n".join(errs)
    if len(files) == 1:
        k = files[0]
        return f"{head}\n\nFound {n} error{'s' if n > 1 else ''} in {TSC_FILES[k].split(':')[0]}:{TSC_FILES[k].split(':')[1]}\n"
    table = "\n".join(
        f"{sum(1 for kk, _ in TSC_ERRORS if kk == k):>6}  {TSC_FILES[k]}" for k in files
    )
    return f"{head}\n\nFound {n} errors in {len(files)} files.\n\nErrors  Files\n{table}\n"


def strict_tsc(r, rng, remaining):
    """A strict `tsc` run reporting the errors of the files still in remaining."""
    shell(
        r,
        "npx tsc --noEmit -p tsconfig.json",
        tsc_output(remaining),
        error=bool(remaining),
        dur=rng.uniform(4, 6),
    )


def jsdev_tsc_errors_shrink():
    """strict mode turned on; tsc error list shrinks after each targeted fix (one stale hunk re-read and redone)."""
    rng = random.Random(1102)
    r = Run("jsdev_tsc_errors_shrink", SHAPE, "loop-free", None)
    remaining = {"client", "paginate", "lru", "env", "index"}
    r.turn(
        'Task: enable "strict": true in tsconfig and make the project compile. The flag is already flipped on this branch; running tsc.'
    )
    strict_tsc(r, rng, remaining)
    r.turn("7 errors in 5 files. Start with client.ts: Options has no 'retry'.")
    read_slice(
        r,
        "src/api/types.ts",
        """
export interface RetryOptions {
  retries: number;
  factor?: number;
  minTimeoutMs?: number;
}

export interface Options {
  baseUrl: string;
  apiKey?: string;
  timeoutMs?: number;
  userAgent?: string;
}

export type Page<T> = { items: T[]; nextCursor: string | null };
export type PageFetcher<T> = (q: { cursor: string | null; limit: number }) => Promise<Page<T>>;
""",
        1,
        28,
        total=15,
    )
    apply_diff(
        r,
        "src/api/types.ts",
        "@@ -10,3 +10,4 @@\n   timeoutMs?: number;\n   userAgent?: string;\n+  retry?: RetryOptions;\n }\n",
    )
    read_slice(
        r,
        "src/api/client.ts",
        """
  private headers(): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.opts.userAgent ?? `acme-sdk/${VERSION}`,
    };
    if (this.opts.apiKey) {
    h.authorization = `Bearer ${this.opts.apiKey}`;
    }
    h['x-client-id'] = process.env.ACME_CLIENT_ID;
    return h;
  }
""",
        82,
        94,
    )
    apply_diff(
        r,
        "src/api/client.ts",
        "@@ -90,2 +90,3 @@\n-    h['x-client-id'] = process.env.ACME_CLIENT_ID;\n+    const clientId = process.env.ACME_CLIENT_ID;\n+    if (clientId) h['x-client-id'] = clientId;\n     return h;\n",
    )
    remaining.discard("client")
    strict_tsc(r, rng, remaining)
    read_slice(
        r,
        "src/api/paginate.ts",
        """
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
export const itemsOnPage = (page) => page.items.length;
export const firstPage = async <T>(f: PageFetcher<T>) => f({ cursor: null, limit: 1 });
""",
        18,
        30,
        total=24,
    )
    apply_diff(
        r,
        "src/api/paginate.ts",
        "@@ -23,1 +23,1 @@\n-export const itemsOnPage = (page) => page.items.length;\n+export const itemsOnPage = (page: Page<unknown>): number => page.items.length;\n",
    )
    remaining.discard("paginate")
    strict_tsc(r, rng, remaining)
    apply_diff(
        r,
        "src/cache/lru.ts",
        "@@ -50,3 +50,3 @@\n   get(key: K): V | undefined {\n-    const node = this.map.get(key);\n-    this.touch(node);\n+    const node = this.map.get(key);\n+    if (!node) return undefined;\n+    this.touch(node);\n@@ -63,2 +64,2 @@\n-  peek(key: K): V {\n-    return this.map.get(key)?.value;\n+  peek(key: K): V | undefined {\n+    return this.map.get(key)?.value;\n",
        "error: hunk 1 did not apply\n  src/cache/lru.ts: context mismatch at line 50 (expected '  get(key: K): V | undefined {', found '  get(key: K) {')",
        error=True,
    )
    r.turn(
        "My guess at the lru.ts context was wrong; read the real lines instead of guessing again."
    )
    read_slice(
        r,
        "src/cache/lru.ts",
        """
  has(key: K): boolean {
    return this.map.has(key);
  }

  get(key: K) {
    const node = this.map.get(key);
    this.touch(node);
    return node.value;
  }

  private touch(node: Node<K, V>) {
    this.unlink(node);
    this.pushFront(node);
  }

  peek(key: K): V {
    return this.map.get(key)?.value;
  }
""",
        46,
        68,
    )
    apply_diff(
        r,
        "src/cache/lru.ts",
        "@@ -50,5 +50,6 @@\n-  get(key: K) {\n+  get(key: K): V | undefined {\n     const node = this.map.get(key);\n+    if (!node) return undefined;\n     this.touch(node);\n     return node.value;\n   }\n@@ -61,3 +62,3 @@\n-  peek(key: K): V {\n+  peek(key: K): V | undefined {\n     return this.map.get(key)?.value;\n   }\n",
        "applied 2 hunks",
    )
    remaining.discard("lru")
    strict_tsc(r, rng, remaining)
    read_slice(
        r,
        "src/util/env.ts",
        """
const DEFAULTS = {
  ACME_BASE_URL: 'https://api.acme.dev',
  ACME_TIMEOUT_MS: '10000',
};

export function env(name: string): string | undefined {
  const fromProcess = process.env[name];
  if (fromProcess !== undefined) return fromProcess;
  return (DEFAULTS as {})[name];
}
""",
        1,
        16,
        total=10,
    )
    apply_diff(
        r,
        "src/util/env.ts",
        "@@ -1,4 +1,4 @@\n-const DEFAULTS = {\n+const DEFAULTS: Record<string, string> = {\n   ACME_BASE_URL: 'https://api.acme.dev',\n   ACME_TIMEOUT_MS: '10000',\n };\n@@ -9,1 +9,1 @@\n-  return (DEFAULTS as {})[name];\n+  return DEFAULTS[name];\n",
        "applied 2 hunks",
    )
    remaining.discard("env")
    strict_tsc(r, rng, remaining)
    read_slice(
        r,
        "src/index.ts",
        """
export function createClient(opts: Partial<Options> = {}): ApiClient {
  const baseUrl = opts.baseUrl ?? env('ACME_BASE_URL')!;
  const timeoutRaw = env('ACME_TIMEOUT_MS');
  const timeout = timeoutRaw ? Number(timeoutRaw) : null;
  return new ApiClient({ ...opts, baseUrl }, withTimeout(timeout));
}
""",
        8,
        20,
        total=13,
    )
    apply_diff(
        r,
        "src/index.ts",
        "@@ -11,3 +11,3 @@\n-  const timeout = timeoutRaw ? Number(timeoutRaw) : null;\n+  const timeout = opts.timeoutMs ?? (timeoutRaw ? Number(timeoutRaw) : 10_000);\n   return new ApiClient({ ...opts, baseUrl }, withTimeout(timeout));\n",
    )
    remaining.discard("index")
    strict_tsc(r, rng, remaining)
    shell(r, "npx jest --silent", jest_summary(rng, 0, 6, 0, 42, lo=5.0, hi=7.5), dur=6.4)
    r.turn("tsc is clean under strict and the 42 tests still pass.")
    return r


# ---------------------------------------------------------------- loop-free 3


WH_INDEX_1 = """
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { Dispatcher } from './dispatcher';
import { verifySignature } from './signature';
import type { WebhookEvent, WebhookOptions } from './types';

export const DEFAULT_TOLERANCE_S = 300;
export const SIGNATURE_HEADER = 'x-acme-signature';
export const TIMESTAMP_HEADER = 'x-acme-timestamp';

export class WebhookReceiver extends EventEmitter {
  private readonly dispatcher: Dispatcher;
  private readonly secret: string;
  private readonly toleranceS: number;

  constructor(opts: WebhookOptions) {
    super();
    this.secret = opts.secret;
    this.toleranceS = opts.toleranceS ?? DEFAULT_TOLERANCE_S;
    this.dispatcher = new Dispatcher({
      concurrency: opts.concurrency ?? 4,
      onError: (err, evt) => this.emit('error', err, evt),
    });
  }

  on<K extends WebhookEvent['type']>(type: K, handler: Handler<K>): this {
    this.dispatcher.register(type, handler as AnyHandler);
    return this;
  }

  async handle(rawBody: Buffer, headers: IncomingHttpHeaders): Promise<{ status: number }> {
    const sig = headers[SIGNATURE_HEADER];
    const ts = headers[TIMESTAMP_HEADER];
    if (typeof sig !== 'string' || typeof ts !== 'string') {
      return { status: 400 };
    }
    // TODO(#412): timestamp tolerance is not enforced yet
    if (!verifySignature(this.secret, rawBody, sig)) {
      return { status: 401 };
"""
WH_INDEX_2 = """
    }
    let evt: WebhookEvent;
    try {
      evt = JSON.parse(rawBody.toString('utf8')) as WebhookEvent;
    } catch {
      return { status: 400 };
    }
    await this.dispatcher.dispatch(evt);
    return { status: 202 };
  }
}

export { verifySignature } from './signature';
export type { WebhookEvent, WebhookOptions } from './types';
"""
WH_SIG = """
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Header format: "v1=<hex hmac-sha256 of `${timestamp}.${body}`>".
 * Several signatures may be present during secret rotation, comma separated.
 */
export function verifySignature(secret: string, body: Buffer, header: string): boolean {
  const expected = createHmac('sha256', secret).update(body).digest('hex');
  for (const part of header.split(',')) {
    const [scheme, value] = part.trim().split('=', 2);
    if (scheme !== 'v1' || !value) continue;
    const a = Buffer.from(value, 'hex');
    const b = Buffer.from(expected, 'hex');
    if (a.length === b.length && timingSafeEqual(a, b)) return true;
  }
  return false;
}
"""
WH_TYPES = """
export interface WebhookOptions {
  secret: string;
  /** Max clock skew accepted between the sender timestamp and now, seconds. */
  toleranceS?: number;
  concurrency?: number;
  now?: () => number;
}

export type InvoicePaid = { type: 'invoice.paid'; id: string; data: { invoiceId: string; amount: number } };
export type InvoiceVoided = { type: 'invoice.voided'; id: string; data: { invoiceId: string } };
export type CustomerUpdated = { type: 'customer.updated'; id: string; data: { customerId: string } };
export type WebhookEvent = InvoicePaid | InvoiceVoided | CustomerUpdated;

export type Handler<K extends WebhookEvent['type']> = (evt: Extract<WebhookEvent, { type: K }>) => Promise<void>;
export type AnyHandler = (evt: WebhookEvent) => Promise<void>;
"""
WH_DISP_1 = """
import type { AnyHandler, WebhookEvent } from './types';

interface DispatcherOptions {
  concurrency: number;
  onError: (err: unknown, evt: WebhookEvent) => void;
}

export class Dispatcher {
  private readonly handlers = new Map<string, AnyHandler[]>();
  private readonly seen = new Set<string>();
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly opts: DispatcherOptions) {}

  register(type: string, handler: AnyHandler): void {
    const list = this.handlers.get(type) ?? [];
    list.push(handler);
    this.handlers.set(type, list);
  }

  async dispatch(evt: WebhookEvent): Promise<void> {
    if (this.seen.has(evt.id)) return; // idempotency: drop redeliveries
    this.seen.add(evt.id);
    const list = this.handlers.get(evt.type) ?? [];
    await Promise.all(list.map((h) => this.run(h, evt)));
  }
"""
WH_DISP_2 = """
  private async run(h: AnyHandler, evt: WebhookEvent): Promise<void> {
    await this.acquire();
    try {
      await h(evt);
    } catch (err) {
      this.opts.onError(err, evt);
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.opts.concurrency) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(() => { this.active++; resolve(); }));
  }

  private release(): void {
    this.active--;
    this.queue.shift()?.();
  }
}
"""
WH_TEST_1 = """
import { createHmac } from 'node:crypto';
import { WebhookReceiver } from '..';

const SECRET = 'whsec_test_4f9a';
const sign = (body: string, ts: number) =>
  'v1=' + createHmac('sha256', SECRET).update(body).digest('hex');

describe('WebhookReceiver', () => {
  const body = JSON.stringify({ type: 'invoice.paid', id: 'evt_1', data: { invoiceId: 'in_1', amount: 1250 } });

  it('accepts a valid signature', async () => {
    const rx = new WebhookReceiver({ secret: SECRET });
    const ts = Math.floor(Date.now() / 1000);
    const res = await rx.handle(Buffer.from(body), { 'x-acme-signature': sign(body, ts), 'x-acme-timestamp': String(ts) });
    expect(res.status).toBe(202);
  });

  it('rejects a bad signature', async () => {
    const rx = new WebhookReceiver({ secret: SECRET });
    const res = await rx.handle(Buffer.from(body), { 'x-acme-signature': 'v1=deadbeef', 'x-acme-timestamp': '1' });
    expect(res.status).toBe(401);
  });
"""
WH_TEST_2 = """
  it('rejects missing headers', async () => {
    const rx = new WebhookReceiver({ secret: SECRET });
    expect((await rx.handle(Buffer.from(body), {})).status).toBe(400);
  });

  it('drops redelivered events', async () => {
    const rx = new WebhookReceiver({ secret: SECRET });
    const seen = jest.fn().mockResolvedValue(undefined);
    rx.on('invoice.paid', seen);
    const ts = Math.floor(Date.now() / 1000);
    const h = { 'x-acme-signature': sign(body, ts), 'x-acme-timestamp': String(ts) };
    await rx.handle(Buffer.from(body), h);
    await rx.handle(Buffer.from(body), h);
    expect(seen).toHaveBeenCalledTimes(1);
  });
});
"""


def jsdev_read_module_ranges():
    """Reads a whole module range by range (consecutive slices of the same files), then implements #412."""
    rng = random.Random(1103)
    r = Run("jsdev_read_module_ranges", SHAPE, "loop-free", None)
    r.turn(
        "Issue #412: webhook signatures must cover the timestamp and stale timestamps must be rejected. I'll read the whole src/webhooks module first."
    )
    shell(
        r,
        "ls -la src/webhooks src/webhooks/__tests__ && wc -l src/webhooks/*.ts",
        "src/webhooks:\ntotal 28\ndrwxr-xr-x  3 dev dev 4096 Mar 11 09:02 .\ndrwxr-xr-x  8 dev dev 4096 Mar 11 09:02 ..\n"
        "drwxr-xr-x  2 dev dev 4096 Mar 11 09:02 __tests__\n-rw-r--r--  1 dev dev 2271 Mar 11 09:02 dispatcher.ts\n"
        "-rw-r--r--  1 dev dev 1874 Mar 11 09:02 index.ts\n-rw-r--r--  1 dev dev  702 Mar 11 09:02 signature.ts\n"
        "-rw-r--r--  1 dev dev  911 Mar 11 09:02 types.ts\n\nsrc/webhooks/__tests__:\ntotal 8\n"
        "-rw-r--r--  1 dev dev 1698 Mar 11 09:02 receiver.test.ts\n\n   54 src/webhooks/dispatcher.ts\n"
        "   54 src/webhooks/index.ts\n   17 src/webhooks/signature.ts\n   15 src/webhooks/types.ts\n  140 total",
        dur=0.1,
    )
    read_slice(r, "src/webhooks/index.ts", WH_INDEX_1, 1, 40)
    read_slice(r, "src/webhooks/index.ts", WH_INDEX_2, 41, 80, total=54)
    r.turn(
        "index.ts has the TODO at line 38 and never passes `ts` into verifySignature. Next: signature.ts and types.ts."
    )
    read_slice(r, "src/webhooks/signature.ts", WH_SIG, 1, 40, total=17)
    read_slice(r, "src/webhooks/types.ts", WH_TYPES, 1, 40, total=15)
    read_slice(r, "src/webhooks/dispatcher.ts", WH_DISP_1, 1, 30)
    read_slice(r, "src/webhooks/dispatcher.ts", WH_DISP_2, 31, 60, total=54)
    r.turn(
        "The doc comment says the HMAC covers `${timestamp}.${body}` but the code signs only the body, and the test helper ignores ts too. Reading the tests."
    )
    read_slice(r, "src/webhooks/__tests__/receiver.test.ts", WH_TEST_1, 1, 24)
    read_slice(r, "src/webhooks/__tests__/receiver.test.ts", WH_TEST_2, 25, 48, total=41)
    shell(
        r,
        "git grep -n verifySignature -- src docs examples",
        "src/webhooks/index.ts:4:import { verifySignature } from './signature';\n"
        "src/webhooks/index.ts:39:    if (!verifySignature(this.secret, rawBody, sig)) {\n"
        "src/webhooks/index.ts:52:export { verifySignature } from './signature';\n"
        "src/webhooks/signature.ts:7:export function verifySignature(secret: string, body: Buffer, header: string): boolean {\n"
        "examples/express-webhook.ts:18:  if (!verifySignature(process.env.WHSEC!, req.body, String(req.headers['x-acme-signature']))) {",
        dur=0.3,
    )
    apply_diff(
        r,
        "src/webhooks/signature.ts",
        "@@ -7,2 +7,6 @@\n-export function verifySignature(secret: string, body: Buffer, header: string): boolean {\n-  const expected = createHmac('sha256', secret).update(body).digest('hex');\n+export function verifySignature(secret: string, body: Buffer, header: string, timestamp: string): boolean {\n+  const expected = createHmac('sha256', secret)\n+    .update(`${timestamp}.`)\n+    .update(body)\n+    .digest('hex');\n   for (const part of header.split(',')) {\n",
    )
    apply_diff(
        r,
        "src/webhooks/index.ts",
        "@@ -37,4 +37,9 @@\n     }\n-    // TODO(#412): timestamp tolerance is not enforced yet\n-    if (!verifySignature(this.secret, rawBody, sig)) {\n+    const tsNum = Number(ts);\n+    const nowS = Math.floor((this.now?.() ?? Date.now()) / 1000);\n+    if (!Number.isFinite(tsNum) || Math.abs(nowS - tsNum) > this.toleranceS) {\n+      return { status: 401 };\n+    }\n+    if (!verifySignature(this.secret, rawBody, sig, ts)) {\n       return { status: 401 };\n",
    )
    apply_diff(
        r,
        "src/webhooks/__tests__/receiver.test.ts",
        "@@ -5,2 +5,2 @@\n const sign = (body: string, ts: number) =>\n-  'v1=' + createHmac('sha256', SECRET).update(body).digest('hex');\n+  'v1=' + createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex');\n@@ -40,1 +40,9 @@\n+\n+  it('rejects stale timestamps', async () => {\n+    const rx = new WebhookReceiver({ secret: SECRET, toleranceS: 300 });\n+    const ts = Math.floor(Date.now() / 1000) - 301;\n+    const res = await rx.handle(Buffer.from(body), { 'x-acme-signature': sign(body, ts), 'x-acme-timestamp': String(ts) });\n+    expect(res.status).toBe(401);\n+  });\n });\n",
        "applied 2 hunks",
    )
    npx_jest(
        r,
        rng,
        "src/webhooks",
        " PASS  src/webhooks/__tests__/receiver.test.ts\n  WebhookReceiver\n    ✓ accepts a valid signature (6 ms)\n"
        "    ✓ rejects a bad signature (1 ms)\n    ✓ rejects missing headers (1 ms)\n    ✓ drops redelivered events (2 ms)\n"
        "    ✓ rejects stale timestamps (1 ms)\n\n",
        (0, 1, 0, 5),
        dur=2.2,
        lo=1.4,
        hi=2.2,
    )
    shell(
        r,
        "npx tsc --noEmit",
        "examples/express-webhook.ts(18,8): error TS2554: Expected 4 arguments, but got 3.\n\nFound 1 error in examples/express-webhook.ts:18\n",
        error=True,
        dur=4.9,
    )
    apply_diff(
        r,
        "examples/express-webhook.ts",
        "@@ -18,1 +18,2 @@\n-  if (!verifySignature(process.env.WHSEC!, req.body, String(req.headers['x-acme-signature']))) {\n+  const ts = String(req.headers['x-acme-timestamp']);\n+  if (!verifySignature(process.env.WHSEC!, req.body, String(req.headers['x-acme-signature']), ts)) {\n",
    )
    shell(r, "npx tsc --noEmit", "(no output, exit code 0)", dur=4.6)
    return r


# ---------------------------------------------------------------- loop-free 4


def jsdev_dep_upgrade():
    """jest 27 -> 29 upgrade: install / test / fix cycles, each surfacing a different, then no, problem."""
    rng = random.Random(1104)
    r = Run("jsdev_dep_upgrade", SHAPE, "loop-free", None)
    r.turn(
        "Upgrading jest 27 -> 29 (with ts-jest and @types/jest). Checking what's outdated first."
    )
    shell(
        r,
        "npm outdated",
        "Package                 Current   Wanted   Latest  Location                             Depended by\n"
        "@types/jest              27.5.2   27.5.2  29.5.12  node_modules/@types/jest             web-dashboard\n"
        "jest                     27.5.1   27.5.1   29.7.0  node_modules/jest                    web-dashboard\n"
        "ts-jest                  27.1.5   27.1.5   29.1.2  node_modules/ts-jest                 web-dashboard\n"
        "typescript                5.3.3    5.4.2    5.4.2  node_modules/typescript              web-dashboard",
        dur=3.1,
    )
    shell(
        r,
        "npm install -D jest@29 ts-jest@29 @types/jest@29",
        "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.\n"
        "npm WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported\n\n"
        "added 41 packages, removed 58 packages, changed 73 packages, and audited 612 packages in 14s\n\n"
        "78 packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities",
        dur=14.3,
    )
    shell(
        r,
        "npx jest",
        "●  Validation Error:\n\n  Test environment jest-environment-jsdom cannot be found. Make sure the testEnvironment configuration option points to an existing node module.\n\n"
        "  Configuration Documentation:\n  https://jestjs.io/docs/configuration\n\n\n"
        'As of Jest 28 "jest-environment-jsdom" is no longer shipped by default, make sure to install it separately.',
        error=True,
        dur=1.6,
    )
    r.turn("Expected for Jest 28+: jsdom env is a separate package now.")
    shell(
        r,
        "npm install -D jest-environment-jsdom@29",
        "added 37 packages, and audited 649 packages in 6s\n\n80 packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities",
        dur=6.2,
    )
    shell(
        r,
        "npx jest",
        "ts-jest[config] (WARN) Define `ts-jest` config under `globals` is deprecated. Please do\ntransform: {\n    <transform_regex>: ['ts-jest', { /* ts-jest config goes here in Jest */ }],\n},\n\n"
        " FAIL  src/components/__tests__/Table.test.tsx\n  ● Table › renders rows\n\n"
        "    expect(received).toMatchSnapshot()\n\n    Snapshot name: `Table renders rows 1`\n\n"
        "    - Snapshot  - 3\n    + Received  + 3\n\n    -   Object {\n    +   {\n"
        '          "rows": Array [\n    -     Object {\n    +     {\n\n'
        " FAIL  src/utils/__tests__/scheduler.test.ts\n  ● scheduler › fires after the interval\n\n"
        "    expect(received).toHaveBeenCalledTimes(expected)\n\n"
        "    Matcher error: received value must be a mock or spy function\n\n"
        "    Received has type:  function\n    Received has value: [Function setTimeout]\n\n"
        "      10 |     const cb = jest.fn();\n      11 |     schedule(cb, 1000);\n"
        "    > 12 |     expect(setTimeout).toHaveBeenCalledTimes(1);\n\n"
        "      at Object.<anonymous> (src/utils/__tests__/scheduler.test.ts:19:23)\n\n"
        " › 3 snapshots failed from 2 test suites. Inspect your code changes or run `npx jest -u` to update them.\n\n"
        + jest_summary(rng, 3, 11, 4, 87, snap="3 failed, 21 passed, 24 total", lo=8.0, hi=11.0),
        error=True,
        dur=10.4,
    )
    r.turn(
        "Two distinct upgrade issues: Jest 29 changed the default snapshotFormat (no 'Object'/'Array' prefixes) and useFakeTimers('legacy') is gone. Keep the old snapshot format for now to avoid a huge snapshot diff."
    )
    read_slice(
        r,
        "jest.config.ts",
        """
import type { Config } from 'jest';

const config: Config = {
  preset: 'ts-jest',
  testEnvironment: 'jsdom',
  roots: ['<rootDir>/src'],
  moduleNameMapper: { '\\\\.(css|scss)$': 'identity-obj-proxy', '^@/(.*)$': '<rootDir>/src/$1' },
  setupFilesAfterEnv: ['<rootDir>/jest.setup.ts'],
  globals: {
    'ts-jest': { tsconfig: 'tsconfig.test.json', isolatedModules: true },
  },
};

export default config;
""",
        1,
        30,
        total=14,
    )
    apply_diff(
        r,
        "jest.config.ts",
        "@@ -8,1 +8,2 @@\n   setupFilesAfterEnv: ['<rootDir>/jest.setup.ts'],\n+  snapshotFormat: { escapeString: true, printBasicPrototype: true },\n",
    )
    read_slice(
        r,
        "src/utils/__tests__/scheduler.test.ts",
        """
import { schedule } from '../scheduler';

describe('scheduler', () => {
  beforeEach(() => {
    jest.useFakeTimers('legacy');
  });
  afterEach(() => jest.useRealTimers());

  it('fires after the interval', () => {
    const cb = jest.fn();
    schedule(cb, 1000);
    expect(setTimeout).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1000);
    expect(cb).toHaveBeenCalled();
  });
""",
        1,
        25,
    )
    apply_diff(
        r,
        "src/utils/__tests__/scheduler.test.ts",
        "@@ -5,1 +5,2 @@\n-    jest.useFakeTimers('legacy');\n+    jest.useFakeTimers();\n+    jest.spyOn(global, 'setTimeout');\n",
    )
    shell(
        r,
        "npx jest",
        "ts-jest[config] (WARN) Define `ts-jest` config under `globals` is deprecated. Please do\ntransform: {\n    <transform_regex>: ['ts-jest', { /* ts-jest config goes here in Jest */ }],\n},\n\n"
        + jest_summary(rng, 0, 14, 0, 91, snap="24 passed, 24 total", lo=8.0, hi=11.0),
        dur=9.7,
    )
    r.turn(
        "All green. Clean up the ts-jest deprecation warning by moving its config into transform."
    )
    apply_diff(
        r,
        "jest.config.ts",
        "@@ -4,1 +4,4 @@\n-  preset: 'ts-jest',\n+  transform: {\n+    '^.+\\\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json', isolatedModules: true }],\n+  },\n@@ -10,3 +12,0 @@\n-  globals: {\n-    'ts-jest': { tsconfig: 'tsconfig.test.json', isolatedModules: true },\n-  },\n",
        "applied 2 hunks",
    )
    shell(
        r,
        "npx jest",
        jest_summary(rng, 0, 14, 0, 91, snap="24 passed, 24 total", lo=8.0, hi=11.0),
        dur=9.1,
    )
    shell(r, "npx tsc --noEmit -p tsconfig.test.json", "(no output, exit code 0)", dur=5.5)
    shell(
        r,
        "git status --short",
        " M jest.config.ts\n M package-lock.json\n M package.json\n M src/utils/__tests__/scheduler.test.ts",
        dur=0.1,
    )
    return r


# ---------------------------------------------------------------- loop 1


MONEY_FAIL = (
    " FAIL  src/billing/__tests__/invoice.test.ts\n"
    "  ● formatInvoiceTotal › formats amounts with currency prefix\n\n"
    "    expect(received).toBe(expected) // Object.is equality\n\n"
    '    Expected: "USD 12.50"\n    Received: "12.5 USD"\n\n'
    "      23 |   it('formats amounts with currency prefix', () => {\n"
    "      24 |     const inv = makeInvoice({ amount: 1250, currency: 'USD' });\n"
    "    > 25 |     expect(formatInvoiceTotal(inv)).toBe('USD 12.50');\n"
    "         |                                     ^\n"
    "      26 |   });\n\n"
    "      at Object.<anonymous> (src/billing/__tests__/invoice.test.ts:25:37)\n\n"
    " PASS  src/billing/__tests__/tax.test.ts\n PASS  src/billing/__tests__/discount.test.ts\n\n"
)


def jsdev_same_assertion_loop():
    """Two real fixes, then edits to a dead copy of formatMoney; jest failure identical except timing."""
    rng = random.Random(1105)
    r = Run("jsdev_same_assertion_loop", SHAPE, "loop", 10)
    npx_jest(
        r,
        rng,
        "src/billing",
        " FAIL  src/billing/__tests__/discount.test.ts\n  ● applyDiscount › caps percentage discounts at 100%\n\n"
        "    Expected: 0\n    Received: -250\n\n      at Object.<anonymous> (src/billing/__tests__/discount.test.ts:31:40)\n\n"
        " FAIL  src/billing/__tests__/tax.test.ts\n  ● computeTax › rounds half up to the cent\n\n"
        "    Expected: 103\n    Received: 102\n\n      at Object.<anonymous> (src/billing/__tests__/tax.test.ts:14:28)\n\n"
        + MONEY_FAIL.replace(
            " PASS  src/billing/__tests__/tax.test.ts\n PASS  src/billing/__tests__/discount.test.ts\n\n",
            "",
        ),
        (3, 0, 3, 13),
        dur=3.9,
    )
    read_slice(
        r,
        "src/billing/discount.ts",
        """
export function applyDiscount(amount: number, d: Discount): number {
  if (d.kind === 'fixed') return Math.max(0, amount - d.value);
  return amount - Math.round((amount * d.percent) / 100);
}
""",
        10,
        24,
        total=13,
    )
    apply_diff(
        r,
        "src/billing/discount.ts",
        "@@ -12,1 +12,2 @@\n-  return amount - Math.round((amount * d.percent) / 100);\n+  const pct = Math.min(100, Math.max(0, d.percent));\n+  return amount - Math.round((amount * pct) / 100);\n",
    )
    npx_jest(
        r,
        rng,
        "src/billing",
        " FAIL  src/billing/__tests__/tax.test.ts\n  ● computeTax › rounds half up to the cent\n\n"
        "    Expected: 103\n    Received: 102\n\n      at Object.<anonymous> (src/billing/__tests__/tax.test.ts:14:28)\n\n"
        + MONEY_FAIL.replace(" PASS  src/billing/__tests__/tax.test.ts\n", ""),
        (2, 1, 2, 14),
        dur=3.6,
    )
    read_slice(
        r,
        "src/billing/tax.ts",
        """
import { TAX_RATES } from './rates';

export function computeTax(netCents: number, region: string): number {
  const rate = TAX_RATES[region] ?? 0;
  return Math.floor(netCents * rate);
}
""",
        1,
        20,
        total=6,
    )
    apply_diff(
        r,
        "src/billing/tax.ts",
        "@@ -5,1 +5,1 @@\n-  return Math.floor(netCents * rate);\n+  return Math.round(netCents * rate);\n",
    )
    npx_jest(r, rng, "src/billing", MONEY_FAIL, (1, 2, 1, 15), dur=3.5)
    r.turn(
        "Down to the currency format. Expected 'USD 12.50', got '12.5 USD'. Let me look at the money formatter in billing."
    )
    read_slice(
        r,
        "src/billing/money.ts",
        """
// legacy helper, kept for the v1 export endpoint
export function formatMoney(cents: number, currency: string): string {
  const major = cents / 100;
  return `${major} ${currency}`;
}
""",
        1,
        20,
        total=5,
    )
    diffs = [
        (
            "-  return `${major} ${currency}`;\n+  return `${currency} ${major}`;\n",
            "Swap the order so currency comes first.",
        ),
        (
            "-  return `${currency} ${major}`;\n+  return `${currency} ${major.toFixed(2)}`;\n",
            "Still '12.5 USD'? Maybe it needs two decimals as well; add toFixed(2).",
        ),
        (
            "-  const major = cents / 100;\n+  const major = Number((cents / 100).toFixed(2));\n",
            "Same failure. Perhaps the float is the problem; round major explicitly.",
        ),
        (
            "-  return `${currency} ${major.toFixed(2)}`;\n+  return new Intl.NumberFormat('en-US', { style: 'currency', currency, currencyDisplay: 'code' }).format(major).replace(/\\u00a0/g, ' ');\n",
            "Identical again. Try Intl.NumberFormat with currencyDisplay 'code'.",
        ),
        (
            "-  const major = Number((cents / 100).toFixed(2));\n+  const major = Math.round(cents) / 100;\n",
            "No change in the output. Maybe cents arrives as a float; round cents first.",
        ),
        (
            "-export function formatMoney(cents: number, currency: string): string {\n+export function formatMoney(cents: number, currency: string = 'USD'): string {\n",
            "Still '12.5 USD'. Maybe currency is undefined in the fixture; default it.",
        ),
    ]
    for i, (d, thought) in enumerate(diffs):
        if i > 0:
            r.turn(thought)
        apply_diff(r, "src/billing/money.ts", f"@@ -2,4 +2,4 @@\n{d}")
        if i == 4:
            shell(
                r,
                "npx jest --clearCache && npx jest src/billing",
                "Cleared /tmp/jest_rs\n"
                + MONEY_FAIL
                + jest_summary(rng, 1, 2, 1, 15, pattern="src\\/billing", lo=5.5, hi=8.0),
                error=True,
                dur=7.1,
            )
        else:
            shell(
                r,
                "npx jest src/billing",
                MONEY_FAIL + jest_summary(rng, 1, 2, 1, 15, pattern="src\\/billing"),
                error=True,
                dur=rng.uniform(3.2, 4.2),
            )
    r.turn(
        "The output never changes no matter what I do to formatMoney. I'll try one more variant of the formatter."
    )
    return r


# ---------------------------------------------------------------- loop 2


def jsdev_diff_wont_apply():
    """After prettier reformats router.ts, the agent keeps re-guessing the hunk context instead of re-reading."""
    rng = random.Random(1106)
    r = Run("jsdev_diff_wont_apply", SHAPE, "loop", 8)
    shell(
        r,
        "npx eslint src --ext .ts",
        "\n/home/dev/orders-svc/src/server/auth.ts\n  12:10  error  'jwtDecode' is defined but never used  @typescript-eslint/no-unused-vars\n\n"
        "/home/dev/orders-svc/src/server/router.ts\n  88:5  error  Promises must be awaited, end with a call to .catch, end with a call to .then with a rejection handler or be explicitly marked as ignored with the `void` operator  @typescript-eslint/no-floating-promises\n\n"
        "/home/dev/orders-svc/src/utils/strings.ts\n  40:7  error  'slug' is never reassigned. Use 'const' instead  prefer-const\n\n"
        "✖ 3 problems (3 errors, 0 warnings)\n  1 error and 0 warnings potentially fixable with the `--fix` option.",
        error=True,
        dur=7.8,
    )
    read_slice(
        r,
        "src/server/router.ts",
        """
router.post("/orders/:id/refund", requireAuth, async (req, res) => {
    const order = await orders.get(req.params.id)
    if (!order) return res.status(404).json({ error: "not_found" })

    // fire-and-forget audit entry
    audit.record({ kind: "refund", orderId: order.id, actor: req.user.id })

    const refund = await payments.refund(order.paymentId, order.total)
    res.status(201).json(refund)
})
""",
        82,
        96,
    )
    read_slice(
        r,
        "src/server/auth.ts",
        "import type { NextFunction, Request, Response } from 'express';\nimport { verify } from 'jsonwebtoken';\nimport { config } from '../config';\nimport { log } from '../log';\n\nexport interface AuthedUser {\n  id: string;\n  roles: string[];\n}\n\n// TODO: drop once all clients send signed tokens\nimport { jwtDecode } from 'jwt-decode';\n\nexport function requireAuth(req: Request, res: Response, next: NextFunction) {\n  const header = req.headers.authorization ?? '';\n  const token = header.replace(/^Bearer /, '');",
        1,
        16,
    )
    apply_diff(
        r, "src/server/auth.ts", "@@ -12,1 +11,0 @@\n-import { jwtDecode } from 'jwt-decode';\n"
    )
    read_slice(
        r,
        "src/utils/strings.ts",
        "export function slugify(s: string): string {\n  // collapse whitespace and strip accents\n  const base = s.normalize('NFKD').replace(/[\\u0300-\\u036f]/g, '');\n  let slug = base.toLowerCase().replace(/[^a-z0-9]+/g, '-');\n  return slug.replace(/^-|-$/g, '');\n}",
        36,
        44,
        total=41,
    )
    apply_diff(
        r,
        "src/utils/strings.ts",
        "@@ -40,1 +40,1 @@\n-  let slug = base.toLowerCase().replace(/[^a-z0-9]+/g, '-');\n+  const slug = base.toLowerCase().replace(/[^a-z0-9]+/g, '-');\n",
    )
    shell(
        r,
        "npx prettier --write src",
        "src/config.ts 41ms (unchanged)\nsrc/index.ts 12ms (unchanged)\nsrc/server/auth.ts 18ms (unchanged)\nsrc/server/router.ts 57ms\n"
        "src/server/validate.ts 22ms (unchanged)\nsrc/utils/strings.ts 9ms (unchanged)\nsrc/utils/time.ts 7ms (unchanged)",
        dur=1.9,
    )
    r.turn(
        "Now the floating promise in router.ts line 88: prefix the audit call with `void` and add a catch."
    )
    variants = [
        '     // fire-and-forget audit entry\n-    audit.record({ kind: "refund", orderId: order.id, actor: req.user.id })\n+    void audit.record({ kind: "refund", orderId: order.id, actor: req.user.id }).catch(log.warn)\n \n',
        '     // fire-and-forget audit entry\n-    audit.record({ kind: "refund", orderId: order.id, actor: req.user.id });\n+    void audit.record({ kind: "refund", orderId: order.id, actor: req.user.id }).catch(log.warn);\n \n',
        '   // fire-and-forget audit entry\n-  audit.record({ kind: "refund", orderId: order.id, actor: req.user.id })\n+  void audit.record({ kind: "refund", orderId: order.id, actor: req.user.id }).catch(log.warn)\n \n',
        '-    audit.record({ kind: "refund", orderId: order.id, actor: req.user.id })\n+    void audit.record({ kind: "refund", orderId: order.id, actor: req.user.id }).catch(log.warn)\n',
        "     // fire-and-forget audit entry\n-    audit.record({ kind: 'refund', orderId: order.id, actor: req.user.id })\n+    void audit.record({ kind: 'refund', orderId: order.id, actor: req.user.id }).catch(log.warn)\n",
        '\t// fire-and-forget audit entry\n-\taudit.record({ kind: "refund", orderId: order.id, actor: req.user.id })\n+\tvoid audit.record({ kind: "refund", orderId: order.id, actor: req.user.id }).catch(log.warn)\n',
        '-    audit.record({ kind: "refund", orderId: order.id, actor: req.user.id })\r\n+    void audit.record({ kind: "refund", orderId: order.id, actor: req.user.id }).catch(log.warn)\r\n',
    ]
    starts = [86, 86, 86, 88, 86, 86, 87]
    thoughts = [
        None,
        "Hunk rejected. Maybe prettier added semicolons; include them.",
        "Still rejected. Maybe the indentation is 2 spaces now.",
        "Drop the context lines and target line 88 directly.",
        "Perhaps prettier switched to single quotes.",
        "Could be tabs. Try tab indentation.",
        "Maybe the file has CRLF line endings.",
    ]
    for i, (v, st) in enumerate(zip(variants, starts)):
        if thoughts[i]:
            r.turn(thoughts[i])
        apply_diff(
            r,
            "src/server/router.ts",
            f"@@ -{st},{v.count(chr(10)) - 1} +{st},{v.count(chr(10)) - 1} @@\n{v}",
            f"error: hunk 1 did not apply\n  src/server/router.ts: no match for hunk context near line {st} (searched +/-{rng.choice([20, 30, 40])} lines)",
            error=True,
        )
        if i == 3:
            shell(
                r,
                "npx eslint src/server/router.ts",
                "\n/home/dev/orders-svc/src/server/router.ts\n  91:5  error  Promises must be awaited, end with a call to .catch, end with a call to .then with a rejection handler or be explicitly marked as ignored with the `void` operator  @typescript-eslint/no-floating-promises\n\n✖ 1 problem (1 error, 0 warnings)",
                error=True,
                dur=rng.uniform(3.0, 4.5),
            )
    r.turn("The patch keeps failing to apply. Let me try yet another formatting of the hunk.")
    return r


# ---------------------------------------------------------------- loop 3


def eresolve(rng, minute, prefix=""):
    stamp = npm_log_stamp(rng, minute)
    return (
        prefix
        + "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\nnpm ERR! \n"
        "npm ERR! While resolving: web-dashboard@0.14.2\nnpm ERR! Found: react@18.2.0\nnpm ERR! node_modules/react\n"
        'npm ERR!   react@"^18.2.0" from the root project\nnpm ERR! \nnpm ERR! Could not resolve dependency:\n'
        'npm ERR! peer react@"^16.9.0 || ^17.0.0" from @testing-library/react-hooks@7.0.2\n'
        "npm ERR! node_modules/@testing-library/react-hooks\n"
        'npm ERR!   dev @testing-library/react-hooks@"^7.0.2" from the root project\nnpm ERR! \n'
        "npm ERR! Fix the upstream dependency conflict, or retry\nnpm ERR! this command with --force or --legacy-peer-deps\n"
        "npm ERR! to accept an incorrect (and potentially broken) dependency resolution.\nnpm ERR! \nnpm ERR! \n"
        f"npm ERR! For a full report see:\nnpm ERR! /home/dev/.npm/_logs/{stamp}-eresolve-report.txt\n\n"
        f"npm ERR! A complete log of this run can be found in: /home/dev/.npm/_logs/{stamp}-debug-0.log"
    )


def jsdev_eresolve_loop():
    """npm install / npm ci / clean reinstall, all hitting the same peer-dependency ERESOLVE."""
    rng = random.Random(1107)
    r = Run("jsdev_eresolve_loop", SHAPE, "loop", 2)
    shell(
        r,
        "git pull --rebase origin main",
        "From github.com:acme/web-dashboard\n * branch            main       -> FETCH_HEAD\n   3f2a1c4..9b7e0d2  main       -> origin/main\n"
        "Updating 3f2a1c4..9b7e0d2\nFast-forward\n package.json      |   4 +-\n package-lock.json | 212 +++++++++++++++++-----------\n"
        " src/App.tsx       |  18 ++-\n 3 files changed, 141 insertions(+), 93 deletions(-)",
        dur=2.4,
    )
    shell(r, "npm install", eresolve(rng, 14), error=True, dur=rng.uniform(2.5, 4.0))
    r.turn(
        "ERESOLVE after main bumped react to 18. Maybe my node_modules is stale; try a clean install from the lockfile."
    )
    shell(r, "npm ci", eresolve(rng, 15), error=True, dur=rng.uniform(2.5, 4.0))
    shell(
        r,
        "rm -rf node_modules && npm install",
        eresolve(rng, 16),
        error=True,
        dur=rng.uniform(6, 9),
    )
    r.turn("Same conflict. Possibly a corrupted npm cache.")
    shell(
        r,
        "npm cache clean --force && npm install",
        eresolve(rng, 18, prefix="npm WARN using --force Recommended protections disabled.\n"),
        error=True,
        dur=rng.uniform(8, 12),
    )
    read_slice(
        r,
        "package.json",
        """
{
  "name": "web-dashboard",
  "version": "0.14.2",
  "private": true,
  "scripts": {
    "dev": "vite",
    "build": "tsc -b && vite build",
    "test": "jest"
  },
  "dependencies": {
    "react": "^18.2.0",
    "react-dom": "^18.2.0",
    "react-router-dom": "^6.22.1"
  },
  "devDependencies": {
    "@testing-library/react": "^14.2.1",
    "@testing-library/react-hooks": "^7.0.2",
    "@types/react": "^18.2.61",
    "jest": "^29.7.0",
    "typescript": "^5.4.2",
    "vite": "^5.1.4"
  }
}
""",
        1,
        40,
        total=23,
    )
    r.turn(
        "package.json looks fine to me. Retry the install; the registry may have served a stale manifest."
    )
    shell(r, "npm install", eresolve(rng, 21), error=True, dur=rng.uniform(2.5, 4.0))
    shell(r, "npm ci", eresolve(rng, 22), error=True, dur=rng.uniform(2.5, 4.0))
    shell(
        r,
        "rm -rf node_modules package-lock.json && npm install",
        eresolve(rng, 24),
        error=True,
        dur=rng.uniform(9, 14),
    )
    shell(
        r, "npm install --prefer-online", eresolve(rng, 26), error=True, dur=rng.uniform(3.0, 5.0)
    )
    r.turn("Still ERESOLVE on @testing-library/react-hooks. Let me try installing once more.")
    shell(r, "npm i", eresolve(rng, 27), error=True, dur=rng.uniform(2.5, 4.0))
    return r


# ---------------------------------------------------------------- loop 4


def jest_env_node(rng):
    return (
        " FAIL  src/components/__tests__/Modal.test.tsx\n  ● Modal › closes on Escape\n\n"
        "    The error below may be caused by using the wrong test environment, see https://jestjs.io/docs/configuration#testenvironment-string.\n"
        '    Consider using the "jsdom" test environment.\n\n    ReferenceError: document is not defined\n\n'
        "      at render (node_modules/@testing-library/react/dist/pure.js:224:5)\n\n"
        " FAIL  src/components/__tests__/Table.test.tsx\n  ● Test suite failed to run\n\n    ReferenceError: document is not defined\n\n"
        " FAIL  src/hooks/__tests__/useMediaQuery.test.ts\n  ● useMediaQuery › tracks changes\n\n    ReferenceError: window is not defined\n\n"
        " PASS  src/server/__tests__/stream.test.ts\n PASS  src/server/__tests__/hash.test.ts\n PASS  src/utils/__tests__/format.test.ts\n\n"
        + jest_summary(rng, 3, 3, 9, 22, lo=4.0, hi=6.0)
    )


def jest_env_jsdom(rng):
    return (
        " FAIL  src/server/__tests__/stream.test.ts\n  ● Test suite failed to run\n\n    ReferenceError: TextEncoder is not defined\n\n"
        "      1 | import { encodeNdjson } from '../stream';\n\n      at Object.<anonymous> (src/server/stream.ts:3:17)\n\n"
        " FAIL  src/server/__tests__/hash.test.ts\n  ● sha256Hex › hashes a buffer\n\n"
        "    TypeError: crypto.subtle is undefined\n\n      at sha256Hex (src/server/hash.ts:7:38)\n\n"
        " PASS  src/components/__tests__/Modal.test.tsx\n PASS  src/components/__tests__/Table.test.tsx\n"
        " PASS  src/hooks/__tests__/useMediaQuery.test.ts\n PASS  src/utils/__tests__/format.test.ts\n\n"
        + jest_summary(rng, 2, 4, 6, 25, lo=5.0, hi=7.5)
    )


def jsdev_config_flipflop():
    """testEnvironment flipped node <-> jsdom; each setting gives the same one of two failure sets."""
    rng = random.Random(1108)
    r = Run("jsdev_config_flipflop", SHAPE, "loop", 4)
    shell(r, "npx jest", jest_env_node(rng), error=True, dur=5.1)
    read_slice(
        r,
        "jest.config.js",
        """
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\\\.(t|j)sx?$': '@swc/jest' },
  setupFilesAfterEnv: ['<rootDir>/jest.setup.ts'],
  moduleNameMapper: { '^@/(.*)$': '<rootDir>/src/$1' },
};
""",
        1,
        20,
        total=7,
    )
    to_jsdom = "@@ -3,1 +3,1 @@\n-  testEnvironment: 'node',\n+  testEnvironment: 'jsdom',\n"
    to_node = "@@ -3,1 +3,1 @@\n-  testEnvironment: 'jsdom',\n+  testEnvironment: 'node',\n"
    r.turn("Component tests need a DOM. Switch testEnvironment to jsdom.")
    apply_diff(r, "jest.config.js", to_jsdom)
    shell(r, "npx jest", jest_env_jsdom(rng), error=True, dur=6.3)
    thoughts_node = [
        "jsdom breaks the server tests (TextEncoder, crypto.subtle). Those need node; switch back.",
        "Node breaks the components again. Maybe the jsdom failures were a cache issue; try jsdom again.",
        "Back to node, the server tests matter more.",
    ]
    thoughts_jsdom = [
        "Components fail under node. Go back to jsdom.",
        "jsdom once more; perhaps the setup file fixes TextEncoder this time.",
        "Let me flip it to jsdom and check again.",
    ]
    for i in range(3):
        r.turn(thoughts_node[i])
        apply_diff(r, "jest.config.js", to_node)
        shell(r, "npx jest", jest_env_node(rng), error=True, dur=rng.uniform(4.5, 5.6))
        r.turn(thoughts_jsdom[i])
        apply_diff(r, "jest.config.js", to_jsdom)
        shell(r, "npx jest", jest_env_jsdom(rng), error=True, dur=rng.uniform(5.5, 7.0))
    return r


RUNS = [
    jsdev_fix_suite_progress,
    jsdev_tsc_errors_shrink,
    jsdev_read_module_ranges,
    jsdev_dep_upgrade,
    jsdev_same_assertion_loop,
    jsdev_diff_wont_apply,
    jsdev_eresolve_loop,
    jsdev_config_flipflop,
]
