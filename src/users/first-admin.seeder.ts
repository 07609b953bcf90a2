import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { PasswordHasher } from '../common/security/password-hasher';
import { UsersRepository } from './users.repository';

/** Seeds the first admin from ADMIN_EMAIL/ADMIN_PASSWORD when no admin exists (safe on every boot). */
@Injectable()
export class FirstAdminSeeder implements OnModuleInit {
  private readonly logger = new Logger('Seed');

  constructor(
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.run();
  }

  async run(): Promise<void> {
    if (await this.users.anyWithRole('admin')) return;
    const inserted = await this.users.insertFirstAdmin({
      email: this.config.adminEmail,
      name: this.config.adminName,
      passwordHash: await this.passwords.hash(this.config.adminPassword),
      role: 'admin',
      siteId: null,
    });
    if (inserted === 'adminExists') return;
    if (!inserted) {
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
