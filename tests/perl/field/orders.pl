# leakhound - SPDX-License-Identifier: MIT
# DBI with DBD::SQLite: a query text with the customer interpolated, so prepare_cached keeps
# one statement handle (and its SQLite VM) per customer in $dbh->{CachedKids} for good.
use strict;
use warnings;
use DBI;

package Shop::Orders;
my $dbh;
sub db {
    $dbh //= DBI->connect("dbi:SQLite:dbname=:memory:", "", "", { RaiseError => 1 });
}
sub setup {
    db()->do("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL)");
    db()->do("INSERT INTO orders (customer, total) VALUES ('c$_', $_)") for 1 .. 50;
}
sub total_for {
    my ($customer) = @_;
    # the bug: the customer is interpolated, so every query text is new and
    # prepare_cached keeps one statement handle per customer forever
    my $sth = db()->prepare_cached("SELECT SUM(total) FROM orders WHERE customer = '$customer'");    # @prepare
    $sth->execute;
    my ($sum) = $sth->fetchrow_array;
    $sth->finish;
    return $sum;
}

package main;
Shop::Orders::setup();
Shop::Orders::total_for("c" . ($_ % 5000)) for 1 .. 1000;
