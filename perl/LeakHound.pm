# leakhound - SPDX-License-Identifier: MIT
package LeakHound;

# LeakHound: marks and snapshots from Perl code for leakhound (include/leakhound.h).
#
#   use LeakHound;
#   LeakHound::mark("request");          # an iteration boundary: `leakhound counts`, `leaks`
#   LeakHound::snapshot("after-warmup"); # a heap snapshot, now
#   LeakHound::active();                 # true under `leakhound run`
#
# Harmless without the agent: every call does nothing. `leakhound run` puts this module on
# PERL5LIB; `leakhound run --mark-sub NAME` loads it with PERL5OPT=-MLeakHound=mark_sub,NAME
# so that each call of the sub NAME is a mark labelled NAME (the sub is wrapped when the
# program has been compiled, in an INIT block; its callers, caller() and return values are
# unchanged: the wrapper marks and jumps into the sub with goto).

use strict;
use warnings;

our $VERSION = '@PROJECT_VERSION@'; # CMakeLists.txt project(VERSION), filled at build time

my $xs = eval {
    require XSLoader;
    XSLoader::load('LeakHound', $VERSION);
    1;
};

sub active { return $xs && _active() ? 1 : 0 }

sub mark {
    my ($label) = @_;
    _mark(defined $label ? "$label" : "mark") if $xs;
    return;
}

sub snapshot {
    my ($label) = @_;
    _snapshot(defined $label ? "$label" : "snapshot") if $xs;
    return;
}

my @mark_subs;

sub import {
    my ($class, @args) = @_;
    while (@args) {
        my $k = shift @args;
        if ($k eq 'mark_sub') {
            my $name = shift @args;
            die "LeakHound: mark_sub needs a sub name\n" unless defined $name && length $name;
            $name = "main::$name" unless $name =~ /::/;
            push @mark_subs, $name;
        } else {
            die "LeakHound: unknown import '$k' (known: mark_sub NAME)\n";
        }
    }
    return;
}

sub _wrap {
    my ($name) = @_;
    no strict 'refs';
    return 0 unless defined &{$name};
    my $orig = \&{$name};
    my $wrapper = sub {
        _mark($name) if $xs;
        goto &$orig;
    };
    my $proto = prototype $orig;
    no warnings 'redefine';
    if (defined $proto) {
        require Scalar::Util;
        Scalar::Util::set_prototype(\&$wrapper, $proto);
    }
    *{$name} = $wrapper;
    return 1;
}

# After the main program is compiled (so its subs and those of the modules it uses exist),
# before it runs.
INIT {
    for my $name (@mark_subs) {
        next if _wrap($name);
        warn "LeakHound: --mark-sub $name: no such sub once the program was compiled; "
           . "no marks for it\n";
    }
}

1;
