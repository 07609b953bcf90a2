import { Injectable, OnModuleInit } from '@nestjs/common';
import { RolesRepository } from './roles.repository';
import { SYSTEM_ROLES } from './system-roles';

/** Seeds the system roles at start-up (idempotent: existing roles are left as they are). */
@Injectable()
export class SystemRolesSeeder implements OnModuleInit {
  constructor(private readonly roles: RolesRepository) {}

  async onModuleInit(): Promise<void> {
    await this.run();
  }

  run(): Promise<void> {
    return this.roles.insertSystemRolesIfMissing(SYSTEM_ROLES);
  }
}
