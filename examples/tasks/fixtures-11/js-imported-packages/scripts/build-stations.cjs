const fs = require('fs');
const { parse } = require('csv-parse/sync');

const rows = parse(fs.readFileSync('data/stations.csv'), { columns: true });
fs.writeFileSync('public/stations.json', JSON.stringify(rows));
