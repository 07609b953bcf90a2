import type { AppConfig } from '../../../config/app-config';
import { ANY_ORIGIN } from '../../../config/workflow-env-origins';
import { containsSecret, envSecrets } from './redaction';

/** An env value found in a request to an origin it is not bound to. */
export interface SecretOriginRefusal {
  /** The env name (never its value). */
  name: string;
  origin: string;
}

/** The parts of an outbound request a secret could travel in. */
export interface OutgoingRequest {
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/**
 * Where the allow-listed env values may be sent (WORKFLOW_ENV_ORIGINS): a value goes only to the
 * origins bound to its name (`*`: anywhere); a name without origins goes nowhere. Checked on what
 * a request carries (URL, headers, body, in every form redaction recognises) just before it is
 * sent, and on the names a definition's templates read when it is saved.
 */
export class SecretOrigins {
  constructor(
    private readonly allowlist: readonly string[],
    private readonly bindings: ReadonlyMap<string, readonly string[]>,
    private readonly values: Record<string, string | undefined> = process.env,
  ) {}

  static of(config: AppConfig): SecretOrigins {
    return new SecretOrigins(config.workflowEnvAllowlist, config.workflowEnvOrigins);
  }

  /** Whether the value of env `name` may be sent to `origin` (as `URL.origin` writes it). */
  allows(name: string, origin: string): boolean {
    const bound = this.bindings.get(name) ?? [];
    return bound.includes(ANY_ORIGIN) || bound.includes(origin);
  }

  /** The origins `name` is bound to, for messages (`*`, or none). */
  boundTo(name: string): readonly string[] {
    return this.bindings.get(name) ?? [];
  }

  /**
   * The first env value the request carries to an origin it is not bound to, or null. A URL that
   * does not parse is left to the sender, which refuses it before sending anything.
   */
  refusalOf(request: OutgoingRequest): SecretOriginRefusal | null {
    const origin = originOf(request.url);
    if (origin === null) return null;
    const barred = this.allowlist.filter((name) => !this.allows(name, origin));
    const secrets = envSecrets(barred, this.values);
    if (secrets.size === 0) return null;
    const texts = [request.url, ...Object.entries(request.headers ?? {}).flat()];
    if (request.body !== undefined) texts.push(request.body.toString());
    if (!texts.some((text) => containsSecret(text, secrets))) return null;
    // Which one, for the log (the set matched; one of its names is the cause).
    const name = barred.find((candidate) => {
      const one = envSecrets([candidate], this.values);
      return one.size > 0 && texts.some((text) => containsSecret(text, one));
    });
    return { name: name ?? barred[0], origin };
  }
}

/** `scheme://host[:port]` of a URL, or null when it does not parse as one with an origin. */
export function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}
