import { Injectable } from '@nestjs/common';

export type RoleHolderCheck = (roleName: string) => Promise<boolean>;

/**
 * Who holds roles, told by the modules that assign them (users register their check at start-up).
 * Roles are referred to by name, so renaming or deleting a held role is refused; this keeps the
 * roles module from reading another module's table or depending on it.
 */
@Injectable()
export class RoleHolders {
  private readonly checks: RoleHolderCheck[] = [];

  register(check: RoleHolderCheck): void {
    this.checks.push(check);
  }

  async anyHolds(roleName: string): Promise<boolean> {
    for (const check of this.checks) if (await check(roleName)) return true;
    return false;
  }
}
