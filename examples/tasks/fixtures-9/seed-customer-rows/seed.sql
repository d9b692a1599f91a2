-- Seed data for local development
BEGIN;

INSERT INTO customers (id, name, country) VALUES
  (1, 'Aster & Co', 'NL'),
  (2, 'Brightwater Ltd', 'GB'),
  (3, 'Cobalt, Inc.', 'US');

INSERT INTO customer_notes (customer_id, note) VALUES
  (1, 'prefers invoices by post'),
  (3, 'VAT exempt');

-- INSERT INTO customers (id, name, country) VALUES (9, 'Test Account', 'XX');

INSERT INTO customers (id, name, country) VALUES (4, 'Dune Analytics', 'DE');
INSERT INTO customers (id, name, country) VALUES
  (5, 'Elm Street Bakery (Leeds)', 'GB'),
  (6, 'Fjord Freight', 'NO');

INSERT INTO orders (id, customer_id, total) VALUES (100, 1, 250.00), (101, 2, 99.90);

COMMIT;
