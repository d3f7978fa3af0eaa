#!/usr/bin/env node
'use strict';
require('./launch.js')('warden-hook');
