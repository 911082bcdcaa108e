// Route guard: renders the child routes only when a user is stored locally, else redirects to /login. Signed-in
// pages also get the announcement dialog (components/notice).
// No props.
import { Navigate, Outlet, useLocation } from 'react-router';
import { useUser } from '../context/user.js';
import NoticeGate from './notice/index.js';

export default function RequireAuth() {
  const { user } = useUser();
  const location = useLocation();
  if (!user) return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  return (
    <>
      <NoticeGate />
      <Outlet />
    </>
  );
}
