// openDb's `trace` hears every statement the connection runs (the pass bench counts them per run
// submitted): the transaction's own BEGIN, SAVEPOINT and COMMIT too, and nothing when not asked.
import { expect, it } from 'vitest';
import { Store } from '../../../main/engine/store/store.js';

it('hears each statement as it runs, transactions included', () => {
  const heard: string[] = [];
  const store = Store.open(':memory:', { trace: (sql) => heard.push(sql) });
  try {
    heard.length = 0; // the migrations
    store.tx(() => {
      store.ledger.claim('run', 'r1', 'me', 1);
      store.tx(() => store.ledger.release('run', 'r1'));
    });
    expect(heard.map((s) => s.split(' ')[0])).toEqual(['BEGIN', 'INSERT', 'SAVEPOINT', 'DELETE', 'RELEASE', 'COMMIT']);
  } finally {
    store.close();
  }
});
