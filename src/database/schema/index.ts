export * from './sites.table';
export * from './roles.table';
export * from './users.table';
export * from './form-configs.table';
export * from './form-permissions.table';
export * from './data-records.table';
export * from './workflows.table';
export * from './revoked-tokens.table';
