// Logged-in user (the login payload), persisted under localStorage `user`; its id feeds the New-Api-User header.
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { api, USER_KEY } from '../lib/api.js';

export interface StoredUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
}

export interface UserContextValue {
  user: StoredUser | null;
  setUser(u: StoredUser | null): void;
  logout(): Promise<void>;
}

export const ROLE_USER = 1;
export const ROLE_ADMIN = 10;
export const ROLE_ROOT = 100;

export function readStoredUser(): StoredUser | null {
  try {
    const raw = localStorage.getItem(USER_KEY);
    if (!raw) return null;
    const u = JSON.parse(raw) as StoredUser;
    return u && typeof u === 'object' && u.id !== undefined ? u : null;
  } catch {
    return null;
  }
}

export function isAdmin(u: StoredUser | null): boolean {
  return !!u && u.role >= ROLE_ADMIN;
}

export function isRoot(u: StoredUser | null): boolean {
  return !!u && u.role >= ROLE_ROOT;
}

const UserContext = createContext<UserContextValue | null>(null);

export function UserProvider({ children }: { children: ReactNode }) {
  const [user, setUserState] = useState<StoredUser | null>(() => readStoredUser());

  const setUser = useCallback((u: StoredUser | null) => {
    if (u) {
      const { id, username, display_name, role, status, group } = u;
      localStorage.setItem(USER_KEY, JSON.stringify({ id, username, display_name, role, status, group }));
    } else {
      localStorage.removeItem(USER_KEY);
    }
    setUserState(u);
  }, []);

  const logout = useCallback(async () => {
    try {
      await api.get('/api/user/logout');
    } catch {
      /* the session is dropped locally anyway */
    }
    setUser(null);
  }, [setUser]);

  const value = useMemo(() => ({ user, setUser, logout }), [user, setUser, logout]);
  return <UserContext.Provider value={value}>{children}</UserContext.Provider>;
}

export function useUser(): UserContextValue {
  const ctx = useContext(UserContext);
  if (!ctx) throw new Error('useUser must be used inside <UserProvider>');
  return ctx;
}
