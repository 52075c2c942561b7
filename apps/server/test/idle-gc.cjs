// What an idle SQLite server does to better-sqlite3: statements dropped while their database stays open (Prisma's
// adapter prepares one per query), a burst of allocation, then nothing for 8 s, so V8's memory reducer collects
// outside JavaScript. Prints "idled" and exits 0, or aborts where the module's node::ObjectWrap cannot stand that
// (see the Dockerfile's NODE_GYP_HEADERS). Run by test/native-gc.test.ts and, inside the image, by scripts/image-test.sh
// (`node -e`, from /app): better-sqlite3 is resolved from where it runs.
// CommonJS, so that `node -e` runs it as is inside the image.
const Database = require('better-sqlite3');
const db = new Database(':memory:');
db.exec('CREATE TABLE t (a)');
const churn = () => {
  for (let i = 0; i < 20000; i++) db.prepare(`SELECT ${i % 50} AS v FROM t`).all();
};
churn();
const burst = () => {
  const arrays = [];
  for (let i = 0; i < 200; i++) arrays.push(new Array(10000).fill(i));
  return arrays.length;
};
burst();
setTimeout(() => {
  churn();
  db.close();
  process.stdout.write('idled\n');
}, 8000);
