# Allocates per request and frees everything again: nothing grows.
use strict;
use warnings;
package Worker;
sub new { my ($c, %a) = @_; return bless {%a}, $c }
sub handle_request {
    my ($i) = @_;
    my $w = Worker->new(id => $i, name => "worker $i", tags => [ map { "t$_" } 1 .. 5 ]);
    my %index = map { ($_ => $_ * 2) } 1 .. 20;
    my $text = join ",", map { "row $_" } 1 .. 30;
    return length $text;
}
package main;
Worker::handle_request($_) for 1 .. ($ARGV[0] // 200);
