# A log string that grows forever with .=
use strict;
use warnings;
our $AUDIT_LOG = "";

sub audit {
    my ($i) = @_;
    $AUDIT_LOG .= "request $i handled by worker 7 in 0.003 s\n";   # @append
}

audit($_) for 1 .. ($ARGV[0] // 5000);
