// errorElement for the router: shows the error (e.g. a failed lazy chunk load) with a reload button. No props.
import { Button, Result } from 'antd';
import { useRouteError } from 'react-router';

export default function RouteError() {
  const err = useRouteError();
  const msg = err instanceof Error ? err.message : String(err);
  return (
    <Result
      status="error"
      title="Error"
      subTitle={msg}
      extra={<Button onClick={() => window.location.reload()}>Reload</Button>}
    />
  );
}
