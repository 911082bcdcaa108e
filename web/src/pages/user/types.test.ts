import { describe, expect, it } from 'vitest';
import { allowedActions, isDeleted } from './types.js';

const user = (role: number, status = 1, DeletedAt: unknown = null) => ({ role, status, DeletedAt });

describe('allowedActions', () => {
  it('gives an admin no actions on peers or superiors', () => {
    expect(allowedActions(10, user(10)).size).toBe(0);
    expect(allowedActions(10, user(100)).size).toBe(0);
  });
  it('lets only root promote', () => {
    expect(allowedActions(10, user(1)).has('promote')).toBe(false);
    expect(allowedActions(100, user(1)).has('promote')).toBe(true);
    expect(allowedActions(100, user(10)).has('demote')).toBe(true);
    expect(allowedActions(100, user(10)).has('promote')).toBe(false);
  });
  it('offers disable for active users and enable for banned ones', () => {
    expect([...allowedActions(10, user(1, 1))].sort()).toEqual(['delete', 'disable']);
    expect([...allowedActions(10, user(1, 2))].sort()).toEqual(['delete', 'enable']);
  });
  it('offers nothing on deleted users', () => {
    expect(allowedActions(100, user(1, 1, '2024-01-01T00:00:00Z')).size).toBe(0);
    expect(isDeleted({ DeletedAt: { Time: '0001-01-01', Valid: false } })).toBe(false);
  });
});
