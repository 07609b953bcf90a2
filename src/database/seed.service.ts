import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { hashPassword } from '../common/security/password-hasher';
import { DATABASE, type Database } from './database.types';
import { roles, users } from './schema';
import { SYSTEM_ROLES } from './system-roles';

/** Seeds the system roles and, when no admin exists, the first admin (idempotent, safe on every boot). */
@Injectable()
export class SeedService implements OnModuleInit {
  private readonly logger = new Logger('Seed');

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.run();
  }

  async run(): Promise<void> {
    await this.db
      .insert(roles)
      .values(SYSTEM_ROLES.map((role) => ({ ...role, isSystem: true })))
      .onConflictDoNothing({ target: roles.name });

    const admin = await this.db.select({ id: users.id }).from(users).where(eq(users.role, 'admin')).limit(1);
    if (admin.length > 0) return;
    const inserted = await this.db
      .insert(users)
      .values({
        email: this.config.adminEmail,
        name: this.config.adminName,
        passwordHash: await hashPassword(this.config.adminPassword),
        role: 'admin',
      })
      .onConflictDoNothing({ target: users.email })
      .returning({ id: users.id });
    if (inserted.length === 0) {
      this.logger.warn(
        `No admin exists and ${this.config.adminEmail} is taken by a non-admin user; no admin seeded`,
      );
      return;
    }
    if (this.config.adminDefaultsUsed) {
      this.logger.warn(
        `Seeded the admin ${this.config.adminEmail} with default credentials from .env.example; set ADMIN_EMAIL and ADMIN_PASSWORD and change the password`,
      );
    } else {
      this.logger.log(`Seeded the admin ${this.config.adminEmail}`);
    }
  }
}
