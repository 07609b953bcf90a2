/** `status` of the reads (list, grid, export, statistics): submitted records or drafts (README "Drafts"). */
export const STATUS_QUERY = {
  name: 'status',
  required: false,
  enum: ['submitted', 'draft'],
  example: 'draft',
  description:
    "`draft`: drafts instead of submitted records (the caller's own; an admin's, everyone's); `submitted` (default)",
};
