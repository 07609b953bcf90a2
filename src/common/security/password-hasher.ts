import { Inject, Injectable } from '@nestjs/common';
import { hash, verify, type Options } from '@node-rs/argon2';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';

/**
 * argon2id with the configured cost (PASSWORD_HASH_MEMORY_KIB, PASSWORD_HASH_ITERATIONS; by default
 * OWASP's minimum, 19 MiB and 2 iterations, the library's defaults). A hash string carries its own
 * parameters, so hashes made with another cost still verify; a production boot refuses a cost below
 * that minimum (the tests run cheaper, where every reset and login would otherwise spend ~20 ms).
 */
@Injectable()
export class PasswordHasher {
  private readonly options: Options;
  // Verified against when the e-mail is unknown, so both failure paths take the same time.
  private dummyHash: Promise<string> | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.options = { memoryCost: config.passwordHashMemoryKib, timeCost: config.passwordHashIterations };
  }

  hash(password: string): Promise<string> {
    return hash(password, this.options);
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  }

  /** A hash of nothing anyone knows, made once, with the configured cost. */
  dummy(): Promise<string> {
    this.dummyHash ??= this.hash('not-a-real-password-but-hashed-once');
    return this.dummyHash;
  }
}
