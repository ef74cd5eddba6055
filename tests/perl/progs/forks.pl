# Forks a child that execs another perl, and one that just exits.
use strict;
use warnings;
my %keep;
$keep{$_} = "x" x 64 for 1 .. 100;   # @parent
my $pid = fork();
die "fork: $!" unless defined $pid;
if ($pid == 0) {
    exec $^X, '-e', 'my %h; $h{$_} = "y" x 64 for 1 .. 50; print "child done\n"';
    exit 127;
}
waitpid($pid, 0);
my $pid2 = fork();
if ($pid2 == 0) {
    $keep{$_} = "z" x 64 for 101 .. 120;
    exit 0;
}
waitpid($pid2, 0);
print "parent done\n";
