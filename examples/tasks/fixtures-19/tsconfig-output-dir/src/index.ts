import { createServer } from './server';

createServer().listen(3000);
