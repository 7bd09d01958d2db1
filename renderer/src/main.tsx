// Entry: pick the transport (IPC in Electron, HTTP in a browser), build the store, render.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { pickClient } from './api/pick.js';
import { createTendStore } from './store/store.js';
import { App } from './ui/App.js';
import { Services } from './ui/context.js';
import { applyTheme, readTheme } from './ui/theme.js';
import './styles.css';

applyTheme(readTheme());
const client = pickClient();
const store = createTendStore(client);
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Services.Provider value={{ store, client }}>
      <App />
    </Services.Provider>
  </StrictMode>,
);
