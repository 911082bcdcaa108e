// happy-dom lacks matchMedia; antd's Grid and the theme detection read it.
if (typeof window.matchMedia !== 'function') {
  Object.defineProperty(window, 'matchMedia', {
    value: (query: string) => ({
      matches: false,
      media: query,
      onchange: null,
      addListener() {},
      removeListener() {},
      addEventListener() {},
      removeEventListener() {},
      dispatchEvent: () => false,
    }),
  });
}

// antd's static toasts, notifications and modals render in React roots of their own and close on timers (a toast
// after 3 s) and through leave animations. Left running, they go on after a test file's environment is torn down and
// fail the run with "window is not defined": their animations are off, so closing is immediate, and every test
// closes them, and lets their unmount finish, before its environment can go.
import { afterEach } from 'vitest';
import { act, configure } from '@testing-library/react';
import { ConfigProvider, Modal, message, notification } from 'antd';

// A page's first render with antd and the router takes more than testing-library's default second on a loaded 2-core
// machine (six sessions share it): waits give up after 5 s instead, which a passing test never reaches.
configure({ asyncUtilTimeout: 5000 });

ConfigProvider.config({
  holderRender: (children) => <ConfigProvider theme={{ token: { motion: false } }}>{children}</ConfigProvider>,
});

afterEach(async () => {
  await act(async () => {
    message.destroy();
    notification.destroy();
    Modal.destroyAll();
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
});
