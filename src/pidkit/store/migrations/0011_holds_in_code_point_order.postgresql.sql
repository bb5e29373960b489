-- PostgreSQL: see 0011_holds_in_code_point_order.sql.
CREATE INDEX holds_id_c ON holds (naan, id COLLATE "C");
