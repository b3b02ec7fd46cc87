-- The tables of TechEmpower's database tests (World, Fortune; its toolset's
-- create-postgres.sql) and of HttpArena's database profiles (items, and fortune: the same 12
-- rows as TechEmpower's here). Used by crates/pg's tests and by bench/db.sh. items has
-- HttpArena's 100,000 rows and ten categories (its crud load asks for ids up to 50,000 and
-- for the category office).
CREATE TABLE world (
    id integer NOT NULL PRIMARY KEY,
    randomnumber integer NOT NULL DEFAULT 0
);
INSERT INTO world (id, randomnumber)
SELECT x, least(floor(random() * 10000 + 1), 10000) FROM generate_series(1, 10000) AS x;

CREATE TABLE fortune (
    id integer NOT NULL PRIMARY KEY,
    message varchar(2048) NOT NULL
);
INSERT INTO fortune (id, message) VALUES
(1, 'fortune: No such file or directory'),
(2, 'A computer scientist is someone who fixes things that aren''t broken.'),
(3, 'After enough decimal places, nobody gives a damn.'),
(4, 'A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1'),
(5, 'A computer program does what you tell it to do, not what you want it to do.'),
(6, 'Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen'),
(7, 'Any program that runs right is obsolete.'),
(8, 'A list is only as strong as its weakest link. — Donald Knuth'),
(9, 'Feature: A bug with seniority.'),
(10, 'Computers make very fast, very accurate mistakes.'),
(11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
(12, 'フレームワークのベンチマーク');

CREATE TABLE items (
    id integer PRIMARY KEY,
    name text NOT NULL,
    category text NOT NULL,
    price integer NOT NULL,
    quantity integer NOT NULL,
    active boolean NOT NULL,
    tags jsonb NOT NULL,
    rating_score integer NOT NULL,
    rating_count integer NOT NULL
);
INSERT INTO items
SELECT x,
       'Alpha Widget ' || x,
       (ARRAY['electronics', 'tools', 'garden', 'books', 'office', 'home', 'toys', 'sports',
              'auto', 'clothing'])[x % 10 + 1],
       (x * 7) % 500 + 1,
       x % 50,
       x % 3 <> 0,
       CASE WHEN x % 2 = 0 THEN '["fast", "new"]'::jsonb ELSE '["sale"]'::jsonb END,
       x % 100,
       x % 1000
FROM generate_series(1, 100000) AS x;
ANALYZE;
